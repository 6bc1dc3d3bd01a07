/**
 * The daemon-client commands through the built `svc`, against a real daemon
 * started with `svc start`, over the Unix socket: output, `--json`
 * documents, exit codes (0 ok, 1 failure, 2 usage) and one-line errors.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCsv } from "../../src/cli/client/csv.js";
import { hasStackTrace } from "./helpers/cli.js";
import { clientProject, receiver, spawnSvc, until, waitRun, type ClientProject, type Receiver, type RunRow } from "./helpers/daemonClient.js";

const yaml = (hook: string) => `defaults:
  timezone: Europe/Berlin
integrations:
  hook:
    provider: webhook
    webhook_url: ${hook}
  dead-hook:
    provider: webhook
    webhook_url: http://127.0.0.1:9/nothing-listens
jobs:
  hello:
    description: says hello
    command: echo "hello from svc"; echo "to stderr" >&2
    tags: [grp]
  failing:
    command: echo "about to fail"; exit 3
    on_failure: ignore
    tags: [grp]
  checked:
    command: echo main-line
    healthcheck:
      command: echo hc-line
  slow:
    command: for i in $(seq 1 600); do echo "tick $i"; sleep 0.1; done
    tags: [slowtag]
  gated:
    command: echo gated
    depends_on: [failing]
  daily:
    command: "true"
    frequency: daily
    time: "0230"
`;

const JOBS = ["checked", "daily", "failing", "gated", "hello", "slow"];

let p: ClientProject;
let rx: Receiver;
let url: string;

beforeAll(async () => {
  rx = await receiver();
  p = clientProject({ "svc.yaml": yaml(rx.url) });
  url = await p.start();
});

afterAll(async () => {
  await p?.stop();
  await rx?.close();
  p?.remove();
});

/** `svc ...` that must succeed; returns stdout. */
async function ok(args: string[], env?: Record<string, string>): Promise<string> {
  const r = await p.svc(args, env ? { env } : {});
  expect(r.code, `svc ${args.join(" ")}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
  expect(hasStackTrace(r.stderr)).toBe(false);
  return r.stdout;
}

/** `svc ...` that must fail with `code` and one line on stderr; returns that line. */
async function fails(args: string[], code: number): Promise<string> {
  const r = await p.svc(args);
  expect(r.code, `svc ${args.join(" ")}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(code);
  expect(hasStackTrace(r.stderr)).toBe(false);
  const errLines = r.stderr.trim().split("\n");
  expect(errLines, r.stderr).toHaveLength(1);
  expect(errLines[0]).toMatch(/^svc: /);
  return errLines[0]!;
}

const json = <T>(text: string): T => JSON.parse(text) as T;

async function startRun(job: string, extra: string[] = []): Promise<number> {
  return json<{ run_id: number }>(await ok(["run", job, "--json", ...extra])).run_id;
}

describe("svc start", () => {
  it("printed the base URL from api.addr, and the daemon answers there", async () => {
    expect(url).toBe(`http://${p.addr()}/`);
    expect((await p.api("GET", "/api/status", undefined, { tcp: true })).status).toBe(200);
  });

  it("refuses a second start while the daemon runs (exit 1, names the pid)", async () => {
    const line = await fails(["start"], 1);
    expect(line).toContain(`daemon already running (pid ${p.pid()})`);
  });
});

describe("svc status", () => {
  it("prints a table: job, state, paused, last run, next run in local time, tags", async () => {
    const out = await ok(["status"]);
    const [header, ...rows] = out.trim().split("\n");
    expect(header).toMatch(/^JOB\s+STATE\s+PAUSED\s+LAST RUN\s+LAST RUN AT\s+NEXT RUN\s+TAGS$/);
    expect(rows.slice(0, JOBS.length).map((r) => r.split(/\s+/)[0])).toEqual(JOBS);
    const daily = rows.find((r) => r.startsWith("daily"))!;
    expect(daily).toMatch(/\d{4}-\d{2}-\d{2} 02:30:00 CES?T/); // in the job's zone (Europe/Berlin), whatever TZ says
    expect(rows.find((r) => r.startsWith("gated"))).toContain("after failing");
    expect(rows.find((r) => r.startsWith("hello"))).toMatch(/idle\s+no\s+-\s+-\s+manual\s+grp$/);
    expect(out).toMatch(/6 jobs, 0 running, 0 paused/);
    expect(out).not.toContain("\x1b["); // not a terminal: no colour
  });

  it("--json prints the API's document; --tag filters", async () => {
    const doc = json<{ jobs: { name: string; tags: string[]; paused: boolean }[] }>(await ok(["status", "--json"]));
    expect(doc.jobs.map((j) => j.name)).toEqual(JOBS);
    const grp = json<{ jobs: { name: string }[] }>(await ok(["status", "--tag", "grp", "--json"]));
    expect(grp.jobs.map((j) => j.name)).toEqual(["failing", "hello"]);
    expect(await fails(["status", "--tag", "no-such-tag"], 1)).toContain('no job has the tag "no-such-tag"');
    expect(await fails(["status", "--tag", "no-such-tag", "--json"], 1)).toContain('no job has the tag "no-such-tag"');
  });

  it("colours only with FORCE_COLOR (or a TTY), never with NO_COLOR", async () => {
    expect(await ok(["status"], { FORCE_COLOR: "1" })).toContain("\x1b[");
    expect(await ok(["status"], { FORCE_COLOR: "1", NO_COLOR: "1" })).not.toContain("\x1b[");
  });
});

describe("svc run, retry, cancel, skip", () => {
  it("run prints the run it started; --reason is recorded", async () => {
    const out = await ok(["run", "hello", "--reason", "manual check"]);
    const m = /^started run (\d+) of hello \((PENDING|RUNNING|SUCCESS), cycle [0-9a-f-]{36}\)$/.exec(out.trim());
    expect(m, out).not.toBeNull();
    const run = await waitRun(p, Number(m![1]));
    expect(run).toMatchObject({ job_name: "hello", status: "SUCCESS", reason: "manual check", triggered_by: "cli" });
  });

  it("run --wait follows the log live and exits 0 on SUCCESS", async () => {
    const r = await p.svc(["run", "hello", "--wait"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("hello from svc");
    expect(r.stdout).toContain("to stderr");
    expect(r.stderr).toMatch(/run \d+ of hello: SUCCESS \(exit 0/);
  });

  it("run --wait exits 1 when the run fails, with its exit code", async () => {
    const r = await p.svc(["run", "failing", "--wait"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("about to fail");
    expect(r.stderr).toMatch(/run \d+ of failing: FAILED \(exit 3/);
    expect(hasStackTrace(r.stderr)).toBe(false);
  });

  it("run --wait --json prints the final run record", async () => {
    const r = await p.svc(["run", "hello", "--wait", "--json"]);
    expect(r.code).toBe(0);
    expect(json<RunRow>(r.stdout)).toMatchObject({ job_name: "hello", status: "SUCCESS", exit_code: 0 });
  });

  it("run --tag runs every job with the tag", async () => {
    const doc = json<{ tag: string; runs: { job: string; run_id: number }[] }>(await ok(["run", "--tag", "grp", "--json"]));
    expect(doc.tag).toBe("grp");
    expect(doc.runs.map((r) => r.job).sort()).toEqual(["failing", "hello"]);
    for (const r of doc.runs) await waitRun(p, r.run_id);
  });

  it("run --tag --wait follows every run, prefixed by job, and fails when one fails", async () => {
    const r = await p.svc(["run", "--tag", "grp", "--wait"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^hello\s+\| hello from svc$/m);
    expect(r.stdout).toMatch(/^failing\s+\| about to fail$/m);
    expect(r.stderr).toMatch(/1 of 2 runs in cycle [0-9a-f-]{36} did not succeed/);
  });

  it("run needs a job or --tag (exit 2); --reason over 500 characters is a usage error", async () => {
    expect(await fails(["run"], 2)).toContain("give a job name or --tag");
    expect(await fails(["run", "hello", "--tag", "grp"], 2)).toContain("not both");
    expect(await fails(["run", "hello", "--reason", "x".repeat(501)], 2)).toContain("at most 500");
  });

  it("retry retries the latest FAILED run; a job whose latest run succeeded is refused (exit 1)", async () => {
    const before = await startRun("failing");
    await waitRun(p, before);
    const out = await ok(["retry", "failing"]);
    const id = Number(/^retrying run \d+ of failing as run (\d+)/.exec(out)![1]);
    const run = await waitRun(p, id);
    expect(run).toMatchObject({ status: "FAILED", trigger: "manual", attempt: 2 });
    expect(await fails(["retry", "hello"], 1)).toMatch(/FAILED/);
  });

  it("cancel stops the running run; with nothing running it is refused", async () => {
    const id = await startRun("slow");
    await until("slow to run", async () => (await p.api<RunRow>("GET", `/api/runs/${id}`)).body.status === "RUNNING");
    expect((await ok(["cancel", "slow"])).trim()).toBe(`cancelled run ${id} of slow`);
    expect(await waitRun(p, id)).toMatchObject({ status: "FAILED", error: "cancelled" });
    expect(await fails(["cancel", "slow"], 1)).toBe("svc: job slow has no RUNNING or RETRYING run to cancel");
  });

  it("skip marks the oldest PENDING run SKIPPED; with none it is refused", async () => {
    const id = await startRun("gated"); // waits in PENDING: its upstream never succeeded
    await until("gated to be pending", async () => (await p.api<RunRow>("GET", `/api/runs/${id}`)).body.status === "PENDING");
    expect((await ok(["skip", "gated"])).trim()).toBe(`skipped run ${id} of gated`);
    expect((await p.api<RunRow>("GET", `/api/runs/${id}`)).body.status).toBe("SKIPPED");
    expect(await fails(["skip", "gated"], 1)).toMatch(/PENDING/);
  });
});

describe("svc pause and resume", () => {
  it("pauses and resumes one job", async () => {
    expect((await ok(["pause", "hello"])).trim()).toBe("paused hello");
    const doc = json<{ jobs: { name: string; paused: boolean }[] }>(await ok(["status", "--json"]));
    expect(doc.jobs.find((j) => j.name === "hello")!.paused).toBe(true);
    expect(await ok(["status"])).toMatch(/^hello\s+idle\s+yes/m);
    expect((await ok(["resume", "hello"])).trim()).toBe("resumed hello");
  });

  it("pauses and resumes every job with a tag; --json prints the answer", async () => {
    expect((await ok(["pause", "--tag", "grp"])).trim()).toMatch(/^paused 2 jobs with tag grp: (failing, hello|hello, failing)$/);
    expect(json<{ jobs: { paused: boolean }[] }>(await ok(["status", "--tag", "grp", "--json"])).jobs.every((j) => j.paused)).toBe(true);
    const doc = json<{ tag: string; jobs: string[]; paused: boolean }>(await ok(["resume", "--tag", "grp", "--json"]));
    expect({ ...doc, jobs: doc.jobs.sort() }).toEqual({ tag: "grp", jobs: ["failing", "hello"], paused: false });
  });

  it("needs a job or --tag (exit 2); an unused tag fails (exit 1)", async () => {
    expect(await fails(["pause"], 2)).toContain("give a job name or --tag");
    expect(await fails(["resume", "--tag", "nothing-here"], 1)).toContain("nothing-here");
  });
});

describe("svc logs", () => {
  it("prints the latest run's log; healthcheck lines only with --include-healthcheck", async () => {
    await waitRun(p, await startRun("checked"));
    const plain = await ok(["logs", "checked"]);
    expect(plain).toContain("main-line");
    expect(plain).not.toContain("hc-line");
    expect(await ok(["logs", "checked", "--include-healthcheck"])).toContain("[healthcheck] hc-line");
  });

  it("--run picks a run; --json prints its lines", async () => {
    const first = await startRun("hello", ["--reason", "for logs"]);
    await waitRun(p, first);
    await waitRun(p, await startRun("hello"));
    const doc = json<{ run: number; job: string; status: string; lines: { seq: number; stream: string; line: string }[] }>(
      await ok(["logs", "hello", "--run", String(first), "--json"]),
    );
    expect(doc).toMatchObject({ run: first, job: "hello", status: "SUCCESS" });
    expect(doc.lines.map((l) => l.line)).toEqual(expect.arrayContaining(["--- attempt 1 ---", "hello from svc", "to stderr"]));
    expect(doc.lines.find((l) => l.line === "to stderr")?.stream).toBe("stderr");
    expect(doc.lines.map((l) => l.seq)).toEqual(doc.lines.map((_, i) => i + 1));
    expect(await ok(["logs", "--run", String(first)])).toContain("hello from svc");
  });

  it("says which run does not fit: another job's run, an unknown run, a job without runs", async () => {
    const failing = json<{ jobs: { name: string; last_run: { id: number } | null }[] }>(await ok(["status", "--json"])).jobs.find((j) => j.name === "failing")!;
    expect(await fails(["logs", "hello", "--run", String(failing.last_run!.id)], 1)).toContain(`is a run of failing, not of hello`);
    expect(await fails(["logs", "--run", "999999"], 1)).toContain("run 999999 not found");
    expect(await fails(["logs", "daily"], 1)).toContain("job daily has no runs yet");
    expect(await fails(["logs", "--run", "abc"], 2)).toContain("--run must be a run id");
    expect(await fails(["logs"], 2)).toContain("give a job name");
  });

  it("--tail receives lines live and ends when the run ends", async () => {
    const id = await startRun("slow");
    const tail = spawnSvc(p, ["logs", "slow", "--tail"]);
    try {
      await until("tick 5 on the tail", () => tail.stdout().includes("tick 5\n"), 20_000);
      const seen = tail.stdout().split("\n").length;
      // more lines arrive while the run is still going: it is live, not a snapshot
      await until("more ticks", () => tail.stdout().split("\n").length > seen + 3, 20_000);
      expect((await p.api<RunRow>("GET", `/api/runs/${id}`)).body.status).toBe("RUNNING");
      await ok(["cancel", "slow"]);
      expect(await tail.exited).toBe(0);
      expect(tail.stderr()).toContain(`run ${id} of slow ended FAILED`);
      const ticks = tail.stdout().split("\n").filter((l) => l.startsWith("tick "));
      expect(ticks.map((t) => Number(t.slice(5)))).toEqual(ticks.map((_, i) => i + 1)); // in order, no gap, no duplicate
    } finally {
      tail.kill("SIGKILL");
    }
  });

  it("--tag --tail follows every job with the tag and each new run, lines prefixed by job", async () => {
    const tail = spawnSvc(p, ["logs", "--tag", "grp", "--tail"]);
    try {
      await until("the latest runs", () => /^hello\s+\| hello from svc$/m.test(tail.stdout()), 20_000);
      const id = await startRun("failing", ["--reason", "tail-me"]);
      await until(`run ${id} on the tail`, () => tail.stdout().includes(`--- run ${id} FAILED ---`), 20_000);
      expect(tail.stdout()).toMatch(/^failing \| about to fail$/m);
      expect(tail.stdout()).toMatch(/^hello {3}\| /m); // padded to the longest name, like docker compose
    } finally {
      tail.kill("SIGINT");
      await tail.exited;
    }
  });

  it("--json and --tail do not go together (exit 2)", async () => {
    expect(await fails(["logs", "hello", "--tail", "--json"], 2)).toContain("--json");
  });
});

describe("svc history", () => {
  it("prints the last N runs newest first; --json prints the records", async () => {
    const out = await ok(["history", "hello", "--last", "2"]);
    const [header, ...rows] = out.trim().split("\n");
    expect(header).toMatch(/^RUN\s+STATUS\s+TRIGGER\s+BY\s+ATTEMPT\s+STARTED\s+DURATION\s+EXIT\s+REASON \/ ERROR$/);
    expect(rows).toHaveLength(2);
    const doc = json<{ job: string; runs: RunRow[] }>(await ok(["history", "hello", "--last", "3", "--json"]));
    expect(doc.job).toBe("hello");
    expect(doc.runs).toHaveLength(3);
    expect(doc.runs[0]!.id).toBeGreaterThan(doc.runs[1]!.id);
    expect(rows[0]).toMatch(new RegExp(`^${doc.runs[0]!.id}\\s+SUCCESS\\s+manual\\s+cli`));
  });

  it("checks --last (exit 2) and names an unknown job (exit 1)", async () => {
    expect(await fails(["history", "hello", "--last", "0"], 2)).toContain("--last must be an integer from 1 to 500");
    expect(await fails(["history", "nope-job"], 1)).toBe('svc: unknown job "nope-job" (svc status lists the jobs)');
  });
});

describe("svc audit", () => {
  const tricky = 'backfill, "quoted"\nsecond line';
  let trickyId = 0;

  beforeAll(async () => {
    trickyId = await startRun("hello", ["--reason", tricky]);
    await waitRun(p, trickyId);
  });

  it("filters by job, trigger, status, since, reason and tag; --json prints the API's document", async () => {
    type Doc = { runs: RunRow[]; total: number; limit: number; offset: number };
    const failed = json<Doc>(await ok(["audit", "--job", "failing", "--status", "failed", "--json"]));
    expect(failed.total).toBeGreaterThan(0);
    expect(failed.runs.every((r) => r.job_name === "failing" && r.status === "FAILED")).toBe(true);
    const byReason = json<Doc>(await ok(["audit", "--reason", "BACKFILL", "--json"]));
    expect(byReason.runs.map((r) => r.id)).toEqual([trickyId]);
    const manual = json<Doc>(await ok(["audit", "--trigger", "manual", "--since", "2000-01-01", "--tag", "grp", "--json", "--limit", "5"]));
    expect(manual.limit).toBe(5);
    expect(manual.runs.every((r) => r.trigger === "manual" && ["hello", "failing"].includes(r.job_name))).toBe(true);
    expect(json<Doc>(await ok(["audit", "--since", "2999-01-01", "--json"])).total).toBe(0);
  });

  it("prints a table with the range shown", async () => {
    const out = await ok(["audit", "--job", "hello", "--limit", "2"]);
    expect(out).toMatch(/^RUN\s+JOB\s+STATUS/);
    expect(out).toMatch(/1-2 of \d+ runs \(--limit and --offset for more\)/);
    expect(await ok(["audit", "--since", "2999-01-01"])).toContain("(no runs match)");
  });

  it("--export csv writes RFC 4180 with CONTRACT's header (then error); quotes, commas and newlines survive", async () => {
    const file = join(p.dir, "audit.csv");
    const r = await p.svc(["audit", "--export", "csv", "--output", file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/wrote \d+ runs to /);
    const text = readFileSync(file, "utf8");
    expect(text.split("\r\n")[0]).toBe(
      "id,job_name,status,trigger,triggered_by,reason,attempt,started_at,finished_at,duration_ms,exit_code,sla_breached,hc_status,cycle_id,error,params,scheduled_at,backfill_id",
    );
    expect(text).toContain('"backfill, ""quoted""\nsecond line"');
    const [header, ...records] = parseCsv(text);
    const all = json<{ total: number }>(await ok(["audit", "--json", "--limit", "1"])).total;
    expect(records).toHaveLength(all);
    expect(records.every((rec) => rec.length === header!.length)).toBe(true);
    const row = records.find((rec) => rec[0] === String(trickyId))!;
    expect(row[header!.indexOf("reason")]).toBe(tricky);
    expect(row[header!.indexOf("status")]).toBe("SUCCESS");
    expect(row[header!.indexOf("hc_status")]).toBe("");
    // to stdout, filtered
    const stdout = await ok(["audit", "--job", "failing", "--export", "csv"]);
    expect(parseCsv(stdout).slice(1).every((rec) => rec[1] === "failing")).toBe(true);
  });

  it("rejects bad filter values as usage errors (exit 2)", async () => {
    expect(await fails(["audit", "--status", "bogus"], 2)).toContain("--status must be one of");
    expect(await fails(["audit", "--trigger", "cron"], 2)).toContain("--trigger must be one of");
    expect(await fails(["audit", "--since", "last tuesday"], 2)).toContain("--since must be an ISO date or instant, today, yesterday, now, or a time ago");
    expect(await fails(["audit", "--export", "xml"], 2)).toContain("--export supports csv");
    expect(await fails(["audit", "--output", "x.csv"], 2)).toContain("--output goes with --export");
  });
});

describe("svc export, tags, integrations", () => {
  it("export --format=json prints one document with every table", async () => {
    const doc = json<Record<string, unknown> & { runs: RunRow[]; outputs: unknown[]; alerts: unknown[]; integrations: { name: string }[]; job_state: { job_name: string }[] }>(
      await ok(["export", "--format=json"]),
    );
    expect(Object.keys(doc)).toEqual(["format", "format_version", "exported_at", "daemon", "config", "jobs", "job_state", "runs", "outputs", "alerts", "integrations", "backfills"]);
    const total = json<{ total: number }>(await ok(["audit", "--json", "--limit", "1"])).total;
    expect(doc.runs).toHaveLength(total);
    expect(doc.runs.map((r) => r.id)).toEqual([...doc.runs.map((r) => r.id)].sort((a, b) => a - b));
    expect(doc.integrations.map((i) => i.name)).toEqual(["dead-hook", "hook"]);
    expect(doc.job_state.map((s) => s.job_name)).toContain("hello");
    expect(JSON.stringify(doc.config)).not.toContain(rx.url); // webhook URLs are secrets: ***
    expect(await fails(["export", "--format", "yaml"], 2)).toContain("--format supports json");
  });

  it("export --include-logs --output writes the logs too", async () => {
    const file = join(p.dir, "export.json");
    await ok(["export", "--include-logs", "--output", file]);
    const doc = json<{ run_logs: { run_id: number; lines: { line: string }[] }[] }>(readFileSync(file, "utf8"));
    expect(doc.run_logs.some((l) => l.lines.some((x) => x.line === "hello from svc"))).toBe(true);
  });

  it("tags list prints tags with job counts; --json", async () => {
    expect(await ok(["tags", "list"])).toMatch(/^TAG\s+JOBS\ngrp\s+2\nslowtag\s+1\n$/);
    expect(json(await ok(["tags", "list", "--json"]))).toEqual({ tags: [{ tag: "grp", jobs: 2 }, { tag: "slowtag", jobs: 1 }] });
  });

  it("integrations list and test: a delivery that works (exit 0) and one that fails (exit 1)", async () => {
    expect(await ok(["integrations", "list"])).toMatch(/^NAME\s+PROVIDER\s+CREDENTIALS\s+LAST TEST\s+TESTED AT\ndead-hook\s+webhook\s+configured/);
    const before = rx.bodies.length;
    expect((await ok(["integrations", "test", "hook"])).trim()).toBe("hook: test delivery ok (status 200)");
    expect(rx.bodies.length).toBe(before + 1);
    expect(await fails(["integrations", "test", "dead-hook"], 1)).toContain("dead-hook: test delivery failed");
    expect(await fails(["integrations", "test", "nope"], 1)).toBe('svc: unknown integration "nope" (svc integrations list shows them)');
    const list = json<{ integrations: { name: string; last_test_result: string | null; last_test_at: string | null }[] }>(await ok(["integrations", "list", "--json"]));
    expect(list.integrations.find((i) => i.name === "hook")!.last_test_at).not.toBeNull();
  });
});

describe("svc dash, completion, reload", () => {
  it("dash prints the dashboard URL, and opens it with $BROWSER when set", async () => {
    expect((await ok(["dash"], { DISPLAY: "", WAYLAND_DISPLAY: "" })).trim()).toBe(url);
    expect((await ok(["dash", "--print"])).trim()).toBe(url);
    const opened = join(p.dir, "opened.txt");
    const browser = p.write("browser.sh", `#!/bin/sh\necho "$1" > ${opened}\n`, 0o755);
    await ok(["dash"], { BROWSER: browser });
    await until("the browser script", () => {
      try {
        return readFileSync(opened, "utf8").trim() === url;
      } catch {
        return false;
      }
    });
  });

  it("completion scripts are generated from the program: every command is in them", async () => {
    const bash = await ok(["completion", "bash"]);
    const top = /^ {4}""\) words="([^"]*)"/m.exec(bash)![1]!.split(" ");
    for (const c of ["start", "stop", "reload", "status", "run", "retry", "cancel", "skip", "pause", "resume", "logs", "history", "audit", "export", "tags", "integrations", "dash", "validate", "config", "dag", "next", "completion", "--addr"]) {
      expect(top).toContain(c);
    }
    expect(bash).toMatch(/"completion"\) words="bash zsh fish /);
    expect(bash).toContain("--include-healthcheck");
    expect(bash).toContain("complete -F _svc svc");
    expect(await ok(["completion", "zsh"])).toContain("bashcompinit");
    const fish = await ok(["completion", "fish"]);
    expect(fish).toContain("complete -c svc -n '__fish_use_subcommand' -a status");
    expect(fish).toContain("-l tail");
    expect((await ok(["__complete-jobs"])).trim().split("\n").sort()).toEqual(JOBS);
    expect(await fails(["completion", "tcsh"], 2)).toMatch(/'tcsh' is invalid.*bash, zsh, fish/);
  });

  it("reload applies a valid config, and prints each error of an invalid one (exit 1)", async () => {
    const original = readFileSync(p.path("svc.yaml"), "utf8");
    try {
      writeFileSync(p.path("svc.yaml"), `${original}  extra:\n    command: echo extra\n`);
      expect((await ok(["reload"])).trim()).toBe("reloaded: 7 jobs");
      writeFileSync(p.path("svc.yaml"), `${original}  bad:\n    command: echo\n    frequency: daily\n    time: "2561"\n  worse:\n    command: echo\n    on_failure: explode\n`);
      const r = await p.svc(["reload"]);
      expect(r.code).toBe(1);
      const errLines = r.stderr.trim().split("\n");
      expect(errLines).toHaveLength(3);
      expect(errLines[0]).toMatch(/^svc\.yaml:\d+:\d+: jobs\.bad\.time: /);
      expect(errLines[1]).toMatch(/^svc\.yaml:\d+:\d+: jobs\.worse\.on_failure: /);
      expect(errLines[2]).toBe("svc: config reload rejected (2 errors): the previous config stays in effect");
      expect(json<{ jobs: unknown[] }>(await ok(["status", "--json"])).jobs).toHaveLength(7);
    } finally {
      writeFileSync(p.path("svc.yaml"), original);
      await p.svc(["reload"]);
    }
  });
});

describe("usage and unknown names", () => {
  it("--help works on every command", async () => {
    const cmds = ["start", "stop", "reload", "status", "run", "retry", "cancel", "skip", "pause", "resume", "logs", "history", "audit", "export", "tags", "tags list", "integrations", "integrations list", "integrations test", "dash", "completion"];
    for (const c of cmds) {
      const out = await ok([...c.split(" "), "--help"]);
      expect(out, c).toContain(`Usage: svc ${c}`);
    }
    const top = await ok(["--help"]);
    for (const c of cmds.filter((x) => !x.includes(" "))) expect(top).toMatch(new RegExp(`^  ${c}\\b`, "m"));
    expect(top).toContain("--addr <url>");
  });

  it("an unknown command or flag is exit 2 with a hint", async () => {
    expect(await fails(["stauts"], 2)).toMatch(/unknown command 'stauts'.*status/);
    expect(await fails(["status", "--bogus"], 2)).toContain("unknown option '--bogus'");
    expect(await fails(["run", "hello", "--wiat"], 2)).toMatch(/--wait/);
  });

  it("an unknown job is exit 1 and names it, for every job command", async () => {
    for (const args of [["run", "nope-job"], ["retry", "nope-job"], ["cancel", "nope-job"], ["skip", "nope-job"], ["pause", "nope-job"], ["resume", "nope-job"], ["logs", "nope-job"], ["history", "nope-job"]]) {
      expect(await fails(args, 1), args.join(" ")).toBe('svc: unknown job "nope-job" (svc status lists the jobs)');
    }
  });
});

describe("svc stop", () => {
  it("stops the daemon and waits until it is gone; then every client command says there is no daemon", async () => {
    const pid = p.pid();
    expect((await ok(["stop"])).trim()).toBe(`stopped the daemon (pid ${pid})`);
    expect(p.pid()).toBeNull();
    const line = await fails(["status"], 1);
    expect(line).toBe(`svc: no daemon for ${p.path("svc.yaml")}: start it with \`svc start\``);
    const again = await p.svc(["stop"]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("no daemon is running for");
  });
});
