import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EngineError } from "../../src/engine/errors.js";
import { engineKit, type Kit } from "../helpers/engineKit.js";

let kits: Kit[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const k of kits.splice(0)) await k.close({ keepDir: true });
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

const yaml = `
jobs:
  a:
    command: "echo a"
    tags: [etl]
  b:
    command: "echo b"
    frequency: "after:a"
    tags: [etl, nightly]
  c:
    command: "echo c"
    tags: [other]
`;

async function kit(dir?: string) {
  const k = await engineKit(yaml, dir ? { dir } : {});
  kits.push(k);
  return k;
}

describe("pause and resume", () => {
  it("a paused job is not dependency-triggered, but can still be run by hand", async () => {
    const k = await kit();
    k.engine.pause("b");
    const a = k.engine.runNow("a", { triggeredBy: "cli" });
    await k.waitRun(a.id, ["SUCCESS"]);
    await new Promise((r) => setTimeout(r, 200));
    expect(k.runsOf("b")).toEqual([]);
    const manual = k.engine.runNow("b", { triggeredBy: "cli" });
    expect((await k.waitRun(manual.id, ["SUCCESS"])).trigger).toBe("manual");
  });

  it("pauses and resumes every job with a tag, and names unknown tags", async () => {
    const k = await kit();
    expect(k.engine.pauseTag("etl")).toEqual(["a", "b"]);
    expect(k.store.jobState.get("a")!.paused).toBe(1);
    expect(k.store.jobState.get("b")!.paused).toBe(1);
    expect(k.store.jobState.get("c")?.paused ?? 0).toBe(0);
    expect(k.engine.resumeTag("nightly")).toEqual(["b"]);
    expect(k.store.jobState.get("b")!.paused).toBe(0);
    expect(() => k.engine.pauseTag("nope")).toThrow(EngineError);
    expect(() => k.engine.pause("zzz")).toThrow(/unknown job/);
  });

  it("keeps the pause across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-pause-"));
    dirs.push(dir);
    const first = await kit(dir);
    first.engine.pause("c");
    await first.close({ keepDir: true });
    kits = kits.filter((k) => k !== first);
    const second = await kit(dir);
    expect(second.store.jobState.get("c")!.paused).toBe(1);
  });
});
