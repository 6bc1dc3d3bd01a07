/**
 * Issue 25's bugs, each reproduced through the built `svc` against a real
 * daemon started with `svc start` (the setup a new user tried: a pipeline
 * with outputs, a slow `forbid` job, webhooks to a local receiver).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseCsv } from "../../src/cli/client/csv.js";
import { hasStackTrace, runSvc, tempProject } from "./helpers/cli.js";
import { sharedDaemon, until, waitRun, type RunRow } from "./helpers/daemonClient.js";

const yaml = (hook: string) => `defaults:
  timezone: Europe/Berlin
jobs:
  extract:
    command: echo '{"rows":42}'
    output: {rows: "json_field:rows"}
    tags: [etl]
  transform:
    command: echo "transforming {{ outputs.extract.rows }} rows"
    frequency: after:extract
    tags: [etl]
    notify: {on_failure: "webhook:${hook}"}
  load:
    command: echo "loading"
    depends_on: [transform]
    tags: [etl]
  report:
    command: echo report
    frequency: daily
    time: "0300"
    depends_on: [load]
    tags: [etl]
  starter:
    command: "true"
    tags: [stuck]
  boom:
    command: "exit 4"
    tags: [stuck]
  waiter:
    command: "true"
    depends_on: [starter, never-ran]
    tags: [stuck]
  never-ran:
    command: "true"
  slow:
    command: sleep 30
    concurrency: forbid
  base:
    command: "true"
  failing-load:
    command: 'echo "no space left" >&2; exit 3'
    depends_on: [base]
    notify: {on_failure: {channel: "webhook:${hook}", message: "{{ job.name }} ({{ job.frequency }}) failed"}}
  zulu:
    command: echo zulu-first
    tags: [order]
  alpha:
    command: echo alpha-second
    tags: [order]
`;

const { p, rx } = sharedDaemon((hook) => ({ "svc.yaml": yaml(hook) }));

const json = <T>(text: string): T => JSON.parse(text) as T;

async function runs(job: string): Promise<RunRow[]> {
  return (await p.api<{ runs: RunRow[] }>("GET", `/api/jobs/${job}?runs=100`)).body.runs;
}

describe("bug 1: svc status takes a job's state from its active runs, not its newest run", () => {
  it("a RUNNING run stays 'running' after a SKIPPED newer run, and the running count agrees with /api/status", async () => {
    const first = json<{ run_id: number }>((await p.svc(["run", "slow", "--json"])).stdout).run_id;
    await until("slow to run", async () => (await p.api<RunRow>("GET", `/api/runs/${first}`)).body.status === "RUNNING");
    const second = await p.api<{ run_id: number; status: string }>("POST", "/api/jobs/slow/run");
    expect(second.body.status).toBe("SKIPPED");

    const out = (await p.svc(["status"])).stdout;
    const row = out.split("\n").find((l) => l.startsWith("slow "))!;
    expect(row).toMatch(new RegExp(`^slow\\s+running\\s+no\\s+SKIPPED #${second.body.run_id}\\s`));
    const status = await p.api<{ jobs: { running: number } }>("GET", "/api/status");
    expect(status.body.jobs.running).toBe(1);
    expect(out).toMatch(/\d+ jobs, 1 running, 0 paused/);

    const doc = json<{ jobs: { name: string; active_runs: { id: number; status: string }[] }[] }>((await p.svc(["status", "--json"])).stdout);
    expect(doc.jobs.find((j) => j.name === "slow")!.active_runs).toEqual([{ id: first, status: "RUNNING" }]);
  });

  // bug 3 needs the same running run
  it("bug 3: a manual run refused by forbid says `not started: run N is still running (concurrency: forbid)` and exits 1", async () => {
    const running = (await runs("slow")).find((r) => r.status === "RUNNING")!;
    const r = await p.svc(["run", "slow"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(new RegExp(`^svc: not started: run ${running.id} is still running \\(concurrency: forbid\\); run \\d+ of slow is recorded SKIPPED\\n$`));
    // The API keeps its 202 with status SKIPPED (CONTRACT §3).
    const api = await p.api<{ status: string }>("POST", "/api/jobs/slow/run");
    expect(api.status).toBe(202);
    expect(api.body.status).toBe("SKIPPED");
    const viaJson = await p.svc(["run", "slow", "--json"]);
    expect(viaJson.code).toBe(1);
    expect(json<{ status: string }>(viaJson.stdout).status).toBe("SKIPPED");
    await p.svc(["cancel", "slow"]);
  });
});

describe("bug 2: svc run --tag --wait triggers the tag's roots only and follows the whole cycle", () => {
  it("runs extract -> transform -> load once each, in one cycle, with the outputs; no failure notification; exit 0", async () => {
    const before = rx.bodies.length;
    const r = await p.svc(["run", "--tag", "etl", "--wait"], { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^transform\s+\| transforming 42 rows$/m);
    expect(r.stdout).toMatch(/^load\s+\| loading$/m);
    expect(r.stdout).not.toContain("no value for outputs");
    expect(r.stderr).toMatch(/started run \d+ of extract/);
    expect(r.stderr).not.toMatch(/started run \d+ of (transform|load)/);
    // report has its own schedule: its upstream only gates it, so the tag run does not start it.
    expect(r.stderr).toContain("not run: report has frequency daily");
    const cycle = /cycle ([0-9a-f-]{36})/.exec(r.stderr)![1]!;
    const inCycle = (await p.api<{ runs: RunRow[] }>("GET", `/api/cycles/${cycle}`)).body.runs;
    expect(inCycle.map((x) => [x.job_name, x.status])).toEqual([
      ["extract", "SUCCESS"],
      ["transform", "SUCCESS"],
      ["load", "SUCCESS"],
    ]);
    expect(await runs("report")).toEqual([]);
    await new Promise((res) => setTimeout(res, 300));
    expect(rx.bodies.slice(before)).toEqual([]);
  });

  it("the exit code reflects every run of the cycle; a run stuck behind a gate ends the wait with what it waits for", async () => {
    const r = await p.svc(["run", "--tag", "stuck", "--wait"], { timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    // starter and boom are the roots; waiter follows starter and then waits for never-ran, which never ran.
    expect(r.stderr).toMatch(/started run \d+ of starter/);
    expect(r.stderr).toMatch(/started run \d+ of boom/);
    expect(r.stderr).toMatch(/run \d+ of starter: SUCCESS/);
    expect(r.stderr).toMatch(/run \d+ of boom: FAILED \(exit 4/);
    expect(r.stderr).toMatch(/run \d+ of waiter is still PENDING: never-ran has no run in this cycle and never ran/);
    expect(r.stderr).toMatch(/2 of 3 runs in cycle [0-9a-f-]{36} did not succeed \(1 still PENDING\)/);
    expect((await p.svc(["skip", "waiter"])).code).toBe(0);
  });
});

describe("bug 4: one frequency value in the webhook payload, the template and /api/jobs", () => {
  it("a depends_on-only job reads after:<upstream> everywhere", async () => {
    const before = rx.bodies.length;
    // failing-load follows base (depends_on only: dependency-triggered).
    expect((await p.svc(["run", "base", "--wait"])).code).toBe(0);
    const body = (await until("the failure webhook", () => rx.bodies.slice(before).find((b) => (b as { event?: string }).event === "on_failure"))) as {
      job: { frequency: string };
      message: string;
    };
    const api = await p.api<{ jobs: { name: string; frequency: string }[] }>("GET", "/api/jobs");
    const listed = api.body.jobs.find((j) => j.name === "failing-load")!.frequency;
    expect(listed).toBe("after:base");
    expect(body.job.frequency).toBe(listed);
    expect(body.message).toBe("failing-load (after:base) failed");
    const dag = await p.api<{ nodes: { name: string; frequency: string }[] }>("GET", "/api/dag");
    expect(dag.body.nodes.find((n) => n.name === "failing-load")!.frequency).toBe(listed);
  });
});

describe("bug 6", () => {
  it("svc retry names the run it retries and the new run", async () => {
    const failed = await until("failing-load's run to fail", async () => (await runs("failing-load")).find((r) => r.status === "FAILED"));
    const r = await p.svc(["retry", "failing-load"]);
    expect(r.code, r.stderr).toBe(0);
    const m = /^retrying run (\d+) of failing-load as run (\d+) \(\w+, cycle [0-9a-f-]{36}\)$/.exec(r.stdout.trim());
    expect(m, r.stdout).not.toBeNull();
    expect(Number(m![1])).toBe(failed.id);
    expect(Number(m![2])).toBeGreaterThan(failed.id);
    expect((await waitRun(p, Number(m![2]))).attempt).toBe(Number(failed.attempt) + 1);
  });

  it("the CSV export has the error column the table shows", async () => {
    const r = await p.svc(["audit", "--job", "failing-load", "--export", "csv"]);
    expect(r.code).toBe(0);
    const [header, ...rows] = parseCsv(r.stdout);
    expect(header![14]).toBe("error");
    expect(header!.slice(0, 14).join(",")).toBe(
      "id,job_name,status,trigger,triggered_by,reason,attempt,started_at,finished_at,duration_ms,exit_code,sla_breached,hc_status,cycle_id",
    );
    const table = (await p.svc(["audit", "--job", "failing-load"])).stdout;
    expect(rows[0]![14]).toBe("exit code 3");
    expect(table).toContain("exit code 3");
  });

  it("audit --job with a name neither in svc.yaml nor in the history: exit 1 naming it (table, --json, --export); a known job: exit 0", async () => {
    for (const extra of [[], ["--json"], ["--export", "csv"]]) {
      const r = await p.svc(["audit", "--job", "nevr-ran", ...extra]);
      expect([r.code, r.stderr.trim()]).toEqual([1, 'svc: unknown job "nevr-ran": it is not in svc.yaml and has no runs in the history (svc status lists the jobs)']);
    }
    const known = await p.svc(["audit", "--job", "never-ran", "--since", "2999-01-01"]);
    expect([known.code, known.stdout.trim()]).toEqual([0, "(no runs match)"]);
    // A job with runs is known by its history even when nothing matches the other filters.
    expect((await p.svc(["audit", "--job", "failing-load", "--since", "2999-01-01", "--json"])).code).toBe(0);
  });

  it("logs --tag orders the latest runs' lines by time, not by job name", async () => {
    await waitRun(p, json<{ run_id: number }>((await p.svc(["run", "zulu", "--json"])).stdout).run_id);
    await new Promise((res) => setTimeout(res, 20));
    await waitRun(p, json<{ run_id: number }>((await p.svc(["run", "alpha", "--json"])).stdout).run_id);
    const out = (await p.svc(["logs", "--tag", "order"])).stdout;
    const zulu = out.indexOf("zulu-first");
    const alpha = out.indexOf("alpha-second");
    expect(zulu).toBeGreaterThanOrEqual(0);
    expect(alpha).toBeGreaterThan(zulu);
  });
});

describe("bugs 5 and 6: config errors (svc validate, no daemon)", () => {
  it("bug 5: an output of a job that is neither upstream nor declared reports both problems at once", async () => {
    const proj = tempProject({
      "svc.yaml": `jobs:
  c:
    command: "true"
  d:
    command: echo {{ outputs.c.x }}
`,
    });
    try {
      const r = await runSvc(["validate"], { cwd: proj.dir });
      expect(r.code).toBe(1);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/jobs\.d\.command: \{\{ outputs\.c\.x \}\}: job "c" has no output "x" \(declare it under jobs\.c\.output/);
      expect(lines[0]).toContain('and job "c" is not upstream of "d"');
      expect(lines[0]).toContain('add "c" to jobs.d.depends_on or use frequency after:c');
      expect(lines[0]).not.toContain("add it under");
    } finally {
      proj.remove();
    }
  });

  it("bug 6: after:<typo> gets a did-you-mean like depends_on does, also for a list and a space", async () => {
    const proj = tempProject({
      "svc.yaml": `jobs:
  extract:
    command: "true"
  load:
    command: "true"
  transform:
    command: "true"
    frequency: after:extrct
  both:
    command: "true"
    frequency: after:extrct,load
  spaced:
    command: "true"
    depends_on: [extrct]
`,
    });
    try {
      const r = await runSvc(["validate"], { cwd: proj.dir });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('jobs.transform.frequency: unknown job "extrct" in frequency after:extrct of job "transform" (did you mean "extract"?)');
      expect(r.stderr).toMatch(/jobs\.both\.frequency: after: names one job, .* lists 2: write them as depends_on: \[extrct, load\] \("extrct" \(did you mean "extract"\?\)\)/);
      expect(r.stderr).toContain('jobs.spaced.depends_on[0]: unknown job "extrct" in depends_on of job "spaced" (did you mean "extract"?)');
      expect(hasStackTrace(r.stderr)).toBe(false);
    } finally {
      proj.remove();
    }
  });
});

describe("a user name and password in --addr or SVC_ADDR", () => {
  it("are sent as Basic auth but never shown: not in errors, nor in a bad address's message", async () => {
    const unreachable = await runSvc(["--addr", "http://admin:s3cret-pw@127.0.0.1:1/", "status"]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain("cannot reach the daemon at http://127.0.0.1:1/");
    const bad = await runSvc(["status"], { env: { SVC_ADDR: "ftp://admin:s3cret-pw@127.0.0.1:1/" } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/must be an http:\/\/ or https:\/\/ address/);
    for (const r of [unreachable, bad]) expect(r.stdout + r.stderr).not.toContain("s3cret-pw");
  });
});

describe("an --output path that cannot be written", () => {
  it("is a clear error at once, before any work (svc export, svc audit --export csv)", async () => {
    const p = tempProject({ "svc.yaml": "jobs:\n  a:\n    command: x\n" });
    try {
      for (const args of [
        ["export", "--output", "/no/such/dir/x.json"],
        ["audit", "--export", "csv", "--output", "/no/such/dir/x.csv"],
      ]) {
        const r = await runSvc(args, { cwd: p.dir });
        expect(r.code, args.join(" ")).toBe(1);
        expect(r.stderr.trim()).toBe(`svc: cannot write ${args.at(-1)}: its directory does not exist`);
      }
      // A writable path is left as it was when the export fails (here: no daemon), not emptied first.
      const kept = p.write("last-night.json", '{"runs": []}\n');
      const failed = await runSvc(["export", "--output", kept], { cwd: p.dir });
      expect(failed.code).toBe(1);
      expect(readFileSync(kept, "utf8")).toBe('{"runs": []}\n');
    } finally {
      p.remove();
    }
  });
});
