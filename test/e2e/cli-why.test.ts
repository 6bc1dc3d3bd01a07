/**
 * Issue 25 habit 9: `svc why JOB` through the built `svc` against a real
 * daemon, for each reason a job does not run when expected (paused, upstream
 * failed, gate waiting, excluded date, concurrency, never scheduled, daemon
 * down), and the traces a paused or dependency-blocked non-run leaves
 * (GET /api/db/non_runs), which a log line alone would not.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { hasStackTrace } from "./helpers/cli.js";
import { sharedDaemon, until, waitRun, type RunRow } from "./helpers/daemonClient.js";

const today = new Date().toISOString().slice(0, 10);
const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

const yaml = `defaults:
  timezone: UTC
jobs:
  extract:
    command: "exit 3"
  transform:
    command: echo transform
    frequency: after:extract
  load:
    command: echo load
    frequency: after:transform
  source:
    command: "true"
  follower:
    command: echo follower
    frequency: after:source
  gated:
    command: "true"
    frequency: daily
    time: "0300"
    depends_on: [extract]
  ticker:
    command: "true"
    frequency: "every:1s"
  holiday:
    command: "true"
    frequency: "every:1s"
    exclude: {dates: ["${today}", "${tomorrow}"]}
  hourly-job:
    command: "true"
    frequency: "every:1h"
  slow:
    command: sleep 20
  manual-job:
    command: "true"
`;

const { p } = sharedDaemon({ "svc.yaml": yaml });

interface NonRun {
  job_name: string;
  reason: string;
  detail: string;
  cycle_id: string | null;
  count: number;
  first_slot: string | null;
  last_slot: string | null;
}

async function why(job: string): Promise<string> {
  const r = await p.svc(["why", job]);
  expect(r.code, `svc why ${job}\n${r.stdout}\n${r.stderr}`).toBe(0);
  expect(hasStackTrace(r.stderr)).toBe(false);
  return r.stdout;
}

async function traces(job: string): Promise<NonRun[]> {
  return (await p.api<{ rows: NonRun[] }>("GET", `/api/db/non_runs?job=${job}`)).body.rows;
}

async function runJson(job: string): Promise<number> {
  const r = await p.svc(["run", job, "--json"]);
  return (JSON.parse(r.stdout) as { run_id: number }).run_id;
}

describe("svc why", () => {
  it("upstream failed: the dependency-blocked job says which run failed, and left a trace", async () => {
    const id = await runJson("extract");
    await waitRun(p, id);
    const out = await why("transform");
    expect(out).toMatch(new RegExp(`^transform \\(after:extract\\): it did not run in cycle [0-9a-f-]{36}: upstream extract FAILED \\(run ${id}: exit code 3\\)\\n  fix: svc retry extract\\n`));
    expect(out).toContain("runs that did not happen");
    const rows = await until("the trace", async () => ((await traces("transform")).length > 0 ? traces("transform") : null));
    expect(rows[0]).toMatchObject({ reason: "upstream_failed", detail: `upstream extract FAILED (run ${id}: exit code 3)` });
    // load hangs below transform: it was never triggered, and says where to look.
    expect(await why("load")).toMatch(/^load \(after:transform\): load runs when transform succeeds, and it has never run\n {2}fix: svc why transform\n/);
    const json = JSON.parse((await p.svc(["why", "transform", "--json"])).stdout) as { reasons: { code: string; hint: string }[]; non_runs: NonRun[] };
    expect(json.reasons[0]).toMatchObject({ code: "upstream_failed", hint: "svc retry extract" });
    expect(json.non_runs[0]!.reason).toBe("upstream_failed");
  });

  it("paused, dependency-triggered: not triggered when its upstream succeeded, with a trace for that cycle", async () => {
    expect((await p.svc(["pause", "follower"])).code).toBe(0);
    const id = await runJson("source");
    const run = await waitRun(p, id);
    const out = await why("follower");
    expect(out).toMatch(/^follower \(after:source, paused\): follower is paused: no scheduled or dependency-triggered runs until it is resumed/);
    expect(out).toContain("fix: svc resume follower");
    expect(out).toContain(`also: it did not run in cycle ${String(run.cycle_id)}: paused: not triggered when source succeeded (run ${id})`);
    expect((await traces("follower"))[0]).toMatchObject({ reason: "paused", cycle_id: run.cycle_id });
    await p.svc(["resume", "follower"]);
  });

  it("paused, scheduled: skipped slots are one coalesced trace with a count", async () => {
    expect((await p.svc(["pause", "ticker"])).code).toBe(0);
    const row = await until("three skipped slots", async () => (await traces("ticker")).find((t) => t.reason === "paused" && t.count >= 3), 15_000);
    expect((await traces("ticker")).filter((t) => t.reason === "paused")).toHaveLength(1);
    expect(row.first_slot! < row.last_slot!).toBe(true);
    const out = await why("ticker");
    expect(out).toMatch(/^ticker \(every:1s, paused\): ticker is paused/);
    expect(out).toMatch(/\d+ slots since /);
    await p.svc(["resume", "ticker"]);
    await until("ticker to run again", async () => (await why("ticker")).includes("made run"), 10_000);
  });

  it("an excluded date: the latest slot is excluded, and says by what", async () => {
    const out = await why("holiday");
    expect(out).toMatch(new RegExp(`^holiday \\(every:1s\\): its latest slot \\(.+\\) is excluded: ${today} in exclude\\.dates`));
    await until("an excluded trace", async () => (await traces("holiday")).find((t) => t.reason === "excluded"));
  });

  it("gate waiting: a PENDING run says which upstream it waits for and how to open the gate", async () => {
    const id = await runJson("gated");
    const out = await why("gated");
    expect(out).toMatch(new RegExp(`^gated \\(daily\\): run ${id} is PENDING, waiting for its upstreams: extract has no run in this cycle and its last run \\(\\d+\\) is FAILED`));
    expect(out).toMatch(/fix: svc run extract --cycle [0-9a-f]{8}/);
    expect((await p.svc(["skip", "gated"])).code).toBe(0);
  });

  it("concurrency: running now, and a refused second run says forbid", async () => {
    const first = await runJson("slow");
    await until("slow to run", async () => (await p.api<RunRow>("GET", `/api/runs/${first}`)).body.status === "RUNNING");
    expect((await p.svc(["run", "slow"])).code).toBe(1);
    const out = await why("slow");
    expect(out).toMatch(new RegExp(`^slow \\(manual\\): run ${first} is running \\(since `));
    expect(out).toMatch(/also: run \d+ \(.+\) was SKIPPED: another run of slow was still running \(concurrency: forbid\)/);
    await p.svc(["cancel", "slow"]);
  });

  it("never scheduled: a manual job runs only by hand", async () => {
    expect(await why("manual-job")).toMatch(/^manual-job \(manual\): manual-job has frequency manual: it runs only when started by hand, and it never was\n {2}fix: svc run manual-job\n/);
  });

  it("daemon down: a slot before the daemon started; after a restart, the missed slot is a trace", async () => {
    expect(await why("hourly-job")).toMatch(/^hourly-job \(every:1h\): its latest slot \(.+\) came before the daemon started \(.+\): nothing ran it; catchup is false/);
    await until("ticker to have run", async () => (await p.api<{ runs: RunRow[] }>("GET", "/api/jobs/ticker?runs=1")).body.runs.length > 0 || null);
    expect((await p.svc(["stop"])).code).toBe(0);
    // Down for 5 minutes, as the database tells it: a slot less than a minute old would still run at the
    // restart (the tick's tolerance), an older one is missed.
    const db = new Database(join(p.dataDir, "svc.db"));
    try {
      db.prepare("UPDATE job_state SET next_run = ? WHERE job_name = 'ticker'").run(new Date(Date.now() - 5 * 60_000).toISOString());
    } finally {
      db.close();
    }
    await p.start();
    const missed = await until("the missed trace", async () => (await traces("ticker")).find((t) => t.reason === "missed"));
    expect(missed.detail).toBe("missed: the daemon was not running; catchup is false");
    expect(await why("ticker")).toMatch(/missed {2}\d+ slots since .* missed: the daemon was not running; catchup is false/);
  });

  it("an unknown job is exit 1 and names it", async () => {
    const r = await p.svc(["why", "nope"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('svc: unknown job "nope" (svc status lists the jobs)\n');
  });
});
