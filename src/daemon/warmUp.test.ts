/**
 * The startup warm-up (warmUp.ts) must stay invisible: a real database file
 * is byte-for-byte the same rows after it (and no other connection sees a
 * commit), and its one process, a real shell script here, has run to its end
 * when warmUp resolves.
 */
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { tempStore } from "../../test/helpers/tempStore.js";
import type { DaemonConfig } from "../config/types.js";
import { memoryLogger } from "../shared/logger.js";
import { newRun, tempDir } from "../store/testkit.js";
import { warmUp } from "./warmUp.js";

const store = tempStore();
const tmp = tempDir("svc-warm-");
afterEach(() => {
  delete process.env.SVC_WARMUP;
});

/** A shell that leaves a marker file once it ran its command (after a pause, so an early return would miss it). */
function markingShell(name: string): { cfg: DaemonConfig; marker: string } {
  const marker = join(tmp.dir, `${name}.ran`);
  const shell = join(tmp.dir, `${name}.sh`);
  writeFileSync(shell, `#!/bin/sh\nsleep 0.2\necho "$@" > '${marker}'\n`);
  chmodSync(shell, 0o755);
  return { cfg: { executor: { shell, poolSize: 1, globalEnv: {}, killGraceMs: 1_000 } } as unknown as DaemonConfig, marker };
}

function snapshot(): string {
  const { exported_at: _, ...rest } = store.exportAll();
  return JSON.stringify(rest);
}

describe("warmUp", () => {
  it("changes no row, commits nothing another connection sees, and has run its process to the end when it resolves", async () => {
    const pending = store.runs.create(newRun({ job_name: "extract" }));
    const running = store.runs.transition(store.runs.create(newRun({ job_name: "load" })).id, "RUNNING", { started_at: "2026-11-01T10:00:01.000Z" });
    const before = snapshot();
    const other = new Database(store.path, { readonly: true });
    const version = other.pragma("data_version", { simple: true });
    const { cfg, marker } = markingShell("all");
    const log = memoryLogger();

    await warmUp({ store, daemonConfig: cfg, cwd: tmp.dir, log });

    expect(existsSync(marker)).toBe(true);
    expect(snapshot()).toBe(before);
    expect(other.pragma("data_version", { simple: true })).toBe(version);
    other.close();
    expect(store.runs.get(pending.id)?.status).toBe("PENDING");
    expect(store.runs.get(running.id)?.status).toBe("RUNNING");
    expect(log.entries.some((r) => r.msg === "dispatch path warmed")).toBe(true);
  });

  it("SVC_WARMUP=0 does nothing; SVC_WARMUP=store runs no process", async () => {
    const off = markingShell("off");
    process.env.SVC_WARMUP = "0";
    await warmUp({ store, daemonConfig: off.cfg, cwd: tmp.dir, log: memoryLogger() });
    expect(existsSync(off.marker)).toBe(false);
    const storeOnly = markingShell("store");
    process.env.SVC_WARMUP = "store";
    await warmUp({ store, daemonConfig: storeOnly.cfg, cwd: tmp.dir, log: memoryLogger() });
    expect(existsSync(storeOnly.marker)).toBe(false);
  });

  it("a shell that cannot start costs nothing but a debug line", async () => {
    const cfg = { executor: { shell: join(tmp.dir, "no-such-shell") } } as unknown as DaemonConfig;
    await expect(warmUp({ store, daemonConfig: cfg, cwd: tmp.dir, log: memoryLogger() })).resolves.toBeUndefined();
  });
});
