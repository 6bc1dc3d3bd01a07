/**
 * `storage.retention.interval` (svcd.yaml): retention runs that often, its
 * first pass after one interval when that is shorter than the usual 30 s
 * after startup. Driven through the built svcd, as a user would.
 */
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { project, startDaemon, until, type DaemonProc } from "../helpers/daemonKit.js";

const YAML = "jobs:\n  tick:\n    command: \"true\"\n    concurrency: allow\n";

let d: DaemonProc | null = null;
afterEach(async () => {
  await d?.stop();
  if (d) rmSync(d.dir, { recursive: true, force: true });
  d = null;
});

interface Page {
  rows: Array<{ id: number; status: string }>;
  total: number;
}

async function finishedRuns(): Promise<Page> {
  const r = await d!.api<Page>("GET", "/api/db/job_runs?job=tick&page_size=100");
  expect(r.status).toBe(200);
  return r.body;
}

/** Runs the job `n` times, one after the other (each waits for the one before to end). */
async function runTimes(n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await d!.api<{ run_id: number }>("POST", "/api/jobs/tick/run", {});
    expect(r.status).toBe(202);
    ids.push(r.body.run_id);
    await until(`run ${r.body.run_id} to end`, async () => (await d!.api<{ status: string }>("GET", `/api/runs/${r.body.run_id}`)).body.status === "SUCCESS");
  }
  return ids;
}

describe("storage.retention.interval", () => {
  it("prunes every interval, the first pass after one interval (not 30 s) when it is shorter", { timeout: 60_000 }, async () => {
    const dir = project(YAML, { daemon: "storage:\n  retention:\n    max_runs_per_job: 1\n    interval: 1s\nlog:\n  level: info\n" });
    d = await startDaemon(dir);
    const first = await runTimes(3);
    // Without the key, the first pass comes 30 s after startup and the next a day later: these waits would time out.
    await until("the first prune (runs beyond max_runs_per_job: 1)", async () => (await finishedRuns()).total === 1, 20_000);
    expect((await finishedRuns()).rows.map((r) => r.id)).toEqual([first[2]]);
    const second = await runTimes(2);
    await until("a later prune, one interval on", async () => (await finishedRuns()).total === 1, 20_000);
    expect((await finishedRuns()).rows.map((r) => r.id)).toEqual([second[1]]);
    // Passes that found nothing log "pruned 0"; those that pruned add up to the 4 runs gone.
    // (The daemon's log is written asynchronously: wait for the line of the pass that pruned the last one.)
    const pruned = () => [...d!.output().matchAll(/retention: pruned 0 runs by age and (\d+) by the per-job cap/g)].map((m) => Number(m[1]));
    await until("the log lines of the passes that pruned 4 runs", () => pruned().reduce((a, b) => a + b, 0) >= 4);
    expect(pruned().reduce((a, b) => a + b, 0)).toBe(4);
    expect(pruned().filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
  });
});
