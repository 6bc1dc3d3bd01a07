import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * V8 flags are process-wide, so each case runs in a fresh Node process: it sets svcd's heap flags,
 * starts a worker thread (through keepHeapFlags or not), then allocates bursts that survive, and
 * prints the size of the young generation (new space) in MB.
 */
function newSpaceMb(keep: boolean): number {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "svc-heapflags-"));
  const script = path.join(dir, "probe.mts");
  const mod = path.resolve("src/shared/heapFlags.ts");
  fs.writeFileSync(
    script,
    `import v8 from "node:v8";
import { Worker } from "node:worker_threads";
import { applyHeapFlags, keepHeapFlags } from ${JSON.stringify(mod)};
applyHeapFlags();
const w = new Worker("setInterval(() => {}, 1000)", { eval: true });
if (${keep}) keepHeapFlags(w);
await new Promise((r) => w.once("online", r));
await new Promise((r) => setTimeout(r, 100));
w.unref();
const keepAlive = [];
for (let b = 0; b < 3; b++) { const k = []; for (let i = 0; i < 300000; i++) k.push({ a: i, b: "x" + i, c: [i] }); keepAlive.push(k.length); }
const ns = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
console.log(ns.space_size / 1048576);
process.exit(0);
`,
  );
  try {
    return Number(execFileSync(process.execPath, ["--import", "tsx", script], { encoding: "utf8", cwd: process.cwd() }).trim());
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe("svcd's heap flags and worker threads", { timeout: 60_000 }, () => {
  it("keep the young generation at its initial size after a worker thread starts (a worker resets flags set at runtime)", () => {
    expect(newSpaceMb(true)).toBeLessThanOrEqual(4);
  });

  it("without keepHeapFlags, starting a worker lets the young generation grow (why every worker goes through it)", () => {
    expect(newSpaceMb(false)).toBeGreaterThanOrEqual(16);
  });
});
