import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isGroupAlive, processStartTime } from "../../src/executor/index.js";
import { openStore } from "../../src/store/index.js";
import { engineKit, writeProject, type Kit } from "../helpers/engineKit.js";

let kit: Kit | null = null;
const dirs: string[] = [];
afterEach(async () => {
  await kit?.close();
  kit = null;
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

/** Leaves a RUNNING run in the database whose process group is still alive, as a killed daemon would. */
function orphanedRun(dir: string, yaml: string): { runId: number; pid: number } {
  writeProject(dir, yaml);
  const child = spawn("/bin/sh", ["-c", "sleep 100 & sleep 100"], { detached: true, stdio: "ignore" });
  child.unref();
  const pid = child.pid!;
  const store = openStore({ path: join(dir, ".svc", "svc.db"), busyTimeoutMs: 5000, walAutocheckpoint: 1000 });
  const run = store.runs.create({
    job_name: "work",
    trigger: "manual",
    triggered_by: "cli",
    cycle_id: "00000000-0000-4000-8000-000000000001",
    tags: [],
    created_at: new Date().toISOString(),
  });
  store.runs.transition(run.id, "RUNNING", {
    started_at: new Date().toISOString(),
    pid,
    pid_start: processStartTime(pid),
  });
  store.jobState.upsert("work", { lock_pid: pid });
  store.close();
  return { runId: run.id, pid };
}

describe("startup reconciliation", () => {
  it("kills the orphaned group, fails the run and retries it by policy", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-recover-"));
    dirs.push(dir);
    const yaml = `jobs:\n  work:\n    command: "echo second life"\n    retries: 1\n    retry_delay: "fixed:50ms"\n`;
    const { runId, pid } = orphanedRun(dir, yaml);
    expect(isGroupAlive(pid)).toBe(true);
    kit = await engineKit(yaml, { dir, daemon: "executor:\n  kill_grace: 300ms\n" });
    expect(isGroupAlive(pid)).toBe(false);
    expect(kit.statusesOf(runId).slice(0, 2)).toEqual(["FAILED", "RETRYING"]);
    const done = await kit.waitRun(runId, ["SUCCESS"]);
    expect(done.attempt).toBe(2);
    expect(kit.lines(runId, ["stdout"])).toContain("second life");
    expect(kit.store.jobState.get("work")!.lock_pid).toBeNull();
  });

  it("fails a lost run for good when no retries remain", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-recover-"));
    dirs.push(dir);
    const yaml = `jobs:\n  work:\n    command: "true"\n`;
    const { runId } = orphanedRun(dir, yaml);
    kit = await engineKit(yaml, { dir });
    const run = kit.store.runs.get(runId)!;
    expect(run.status).toBe("FAILED");
    expect(run.error).toBe("daemon restarted, process lost");
    // From its start to its end, as the timeline places it (it was left null).
    expect(run.duration_ms).toBe(Date.parse(run.finished_at!) - Date.parse(run.started_at!));
  });

  it("resumes PENDING runs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-recover-"));
    dirs.push(dir);
    const yaml = `jobs:\n  work:\n    command: "echo resumed"\n`;
    writeProject(dir, yaml);
    const store = openStore({ path: join(dir, ".svc", "svc.db"), busyTimeoutMs: 5000, walAutocheckpoint: 1000 });
    const run = store.runs.create({
      job_name: "work",
      trigger: "manual",
      triggered_by: "cli",
      cycle_id: "00000000-0000-4000-8000-000000000002",
      tags: [],
      created_at: new Date().toISOString(),
    });
    store.close();
    kit = await engineKit(yaml, { dir });
    const done = await kit.waitRun(run.id, ["SUCCESS", "FAILED"]);
    expect([done.status, done.attempt, done.exit_code, done.error]).toEqual(["SUCCESS", 1, 0, null]);
    // The same run went on (no second run of the job), from PENDING to its end.
    expect(kit.runsOf("work").map((r) => r.id)).toEqual([run.id]);
    expect(kit.statusesOf(run.id)).toEqual(["RUNNING", "SUCCESS"]);
    expect(kit.lines(run.id, ["stdout"])).toEqual(["--- attempt 1 ---", "resumed"]);
  });
});
