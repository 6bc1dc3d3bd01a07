/**
 * Issue 25's habits (systemctl, journalctl, docker compose), each as a user
 * types it, through the built `svc` against a real daemon: `logs -f` and
 * `--tail N`, `show`, `status` in the job's zone with `paused` and the
 * changed-on-disk warning, `alerts`, `restart`, `stop`, relative times,
 * `-q`/`-v`, and `run --cycle`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { hasStackTrace } from "./helpers/cli.js";
import { sharedDaemon, spawnSvc, until, waitRun, type RunRow } from "./helpers/daemonClient.js";

const yaml = (hook: string) => `defaults:
  timezone: Europe/Berlin
jobs:
  quick:
    command: echo quick
  chatty:
    command: 'echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three; echo four'
  ticker:
    command: 'for i in 1 2 3 4 5 6 7 8; do echo "tick $i"; sleep 0.25; done'
  berlin:
    command: "true"
    frequency: daily
    time: "0230"
  nyc:
    command: "true"
    frequency: daily
    time: "0900"
    timezone: America/New_York
  held:
    command: "true"
    frequency: hourly
  notifier:
    command: "exit 2"
    notify: {on_failure: "webhook:${hook}"}
  extract:
    command: echo '{"rows":7}'
    output: {rows: "json_field:rows"}
  transform:
    command: echo "rows={{ outputs.extract.rows }}"
    frequency: after:extract
  load:
    command: echo "loaded {{ outputs.extract.rows }}"
    frequency: after:transform
  longjob:
    command: 'sleep 2; echo long done'
`;

const { p, rx } = sharedDaemon((hook) => ({ "svc.yaml": yaml(hook) }));

const json = <T>(text: string): T => JSON.parse(text) as T;

async function ok(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const r = await p.svc(args, { timeoutMs: 60_000 });
  expect(r.code, `svc ${args.join(" ")}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
  expect(hasStackTrace(r.stderr)).toBe(false);
  return r;
}

async function runAndWait(job: string): Promise<RunRow> {
  return waitRun(p, json<{ run_id: number }>((await ok(["run", job, "--json"])).stdout).run_id);
}

describe("7: logs -f, --tail N / -n N, stderr marked", () => {
  it("--tail N and -n N print the last N lines; stderr lines are marked [stderr]", async () => {
    await runAndWait("chatty");
    expect((await ok(["logs", "chatty"])).stdout).toBe("--- attempt 1 ---\none\n[stderr] two\nthree\nfour\n");
    expect((await ok(["logs", "chatty", "--tail", "2"])).stdout).toBe("three\nfour\n");
    expect((await ok(["logs", "chatty", "-n", "3"])).stdout).toBe("[stderr] two\nthree\nfour\n");
    const doc = json<{ lines: { stream: string; line: string }[] }>((await ok(["logs", "chatty", "--tail", "3", "--json"])).stdout);
    expect(doc.lines.map((l) => [l.stream, l.line])).toEqual([
      ["stderr", "two"],
      ["stdout", "three"],
      ["stdout", "four"],
    ]);
  });

  it("-f follows a running job live and returns when the run ends", async () => {
    const id = json<{ run_id: number }>((await ok(["run", "ticker", "--json"])).stdout).run_id;
    const live = spawnSvc(p, ["logs", "ticker", "-f"]);
    // The first lines arrive while the run is still RUNNING: followed, not printed at the end.
    await until("the first tick", () => live.stdout().includes("tick 1"), 10_000);
    expect((await p.api<RunRow>("GET", `/api/runs/${id}`)).body.status).toBe("RUNNING");
    expect(await live.exited).toBe(0);
    expect(live.stdout()).toContain("tick 8\n");
    expect(live.stderr()).toBe(`svc: run ${id} of ticker ended SUCCESS\n`);
  });

  it("--tail N -f prints the last N lines, then follows on from there (no line twice)", async () => {
    const r = await ok(["logs", "ticker", "--tail", "2", "-f"]);
    expect(r.stdout).toBe("tick 7\ntick 8\n");
  });
});

describe("8: svc show JOB / svc status JOB", () => {
  it("one job in detail: state, schedule, next runs in its zone, policy, last alert, last runs", async () => {
    const out = (await ok(["show", "nyc"])).stdout;
    expect(out).toMatch(/^nyc\n/);
    expect(out).toMatch(/^ {2}state: +idle$/m);
    expect(out).toMatch(/^ {2}schedule: +daily 09:00 America\/New_York$/m);
    expect(out).toMatch(/^ {2}next runs: +\d{4}-\d{2}-\d{2} 09:00:00 E[SD]T$/m);
    expect(out.match(/ 09:00:00 E[SD]T$/gm)).toHaveLength(5);
    expect(out).toMatch(/^ {2}policy: +retries 0, on_failure alert, concurrency forbid$/m);
    expect(out).toContain("(no runs of nyc yet)");
    expect((await ok(["status", "nyc"])).stdout).toBe(out);
    const doc = json<{ next_runs: { local: string }[]; active_runs: unknown[]; last_alert: unknown }>((await ok(["show", "nyc", "--json"])).stdout);
    expect(doc.next_runs).toHaveLength(5);
    expect(doc.next_runs[0]!.local).toMatch(/T09:00:00-0[45]:00 E[SD]T$/);
    expect(doc.active_runs).toEqual([]);
    expect(doc.last_alert).toBeNull();
  });

  it("an unknown job is exit 1; `svc sho` suggests show, never stop; `svc stp` suggests nothing", async () => {
    const unknown = await p.svc(["show", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('svc: unknown job "nope" (svc status lists the jobs)\n');
    const sho = await p.svc(["sho", "quick"]);
    expect(sho.code).toBe(2);
    expect(sho.stderr).toContain("(Did you mean show?)");
    const stp = await p.svc(["stp"]);
    expect(stp.code).toBe(2);
    expect(stp.stderr).not.toContain("stop");
    expect(p.pid()).not.toBeNull();
  });
});

describe("10: status in the job's zone, paused, and a warning when svc.yaml changed on disk", () => {
  it("next runs read in each job's own zone; a paused job reads `paused`", async () => {
    await ok(["pause", "held"]);
    const out = (await ok(["status"])).stdout;
    const row = (name: string) => out.split("\n").find((l) => l.startsWith(`${name} `))!;
    expect(row("berlin")).toMatch(/\d{4}-\d{2}-\d{2} 02:30:00 CES?T/);
    expect(row("nyc")).toMatch(/\d{4}-\d{2}-\d{2} 09:00:00 E[SD]T/);
    expect(row("held")).toMatch(/^held\s+idle\s+yes\s+-\s+-\s+paused\s+-$/);
    await ok(["resume", "held"]);
    expect((await ok(["status"])).stdout.split("\n").find((l) => l.startsWith("held "))).toMatch(/\d{2}:00:00 CES?T/);
  });

  it("warns on stderr when svc.yaml differs from what the daemon loaded, until `svc reload`", async () => {
    expect((await ok(["status"])).stderr).toBe("");
    const file = p.path("svc.yaml");
    const text = readFileSync(file, "utf8");
    writeFileSync(file, `${text}# edited\n`);
    const r = await ok(["status"]);
    expect(r.stderr).toMatch(/^svc: warning: svc\.yaml changed on disk since the daemon loaded it \(loaded .+\); run `svc reload` to apply it\n$/);
    expect(r.stdout).toMatch(/^JOB\s+STATE/);
    expect((await ok(["show", "quick"])).stderr).toContain("svc.yaml changed on disk");
    await ok(["reload"]);
    expect((await ok(["status"])).stderr).toBe("");
  });
});

describe("12: svc run JOB --cycle ID joins an earlier cycle", () => {
  it("a re-run of one step finds the outputs of that cycle; a dependent that already succeeded there is not run again", async () => {
    const first = await runAndWait("extract");
    const cycle = first.cycle_id as string;
    const settled = async () => {
      const view = (await p.api<{ runs: RunRow[]; settled: boolean }>("GET", `/api/cycles/${cycle}`)).body;
      return view.settled ? view.runs : null;
    };
    expect((await until("the cycle to settle", settled)).map((x) => x.job_name)).toEqual(["extract", "transform", "load"]);
    // Without --cycle the step has no upstream outputs: a new cycle.
    const alone = await p.svc(["run", "transform", "--wait"]);
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain("no value for outputs.extract.rows");
    // With the cycle (its first 8 characters), it has them.
    const r = await ok(["run", "transform", "--cycle", cycle.slice(0, 8), "--wait"]);
    expect(r.stdout).toContain("rows=7\n");
    expect(r.stderr).toMatch(new RegExp(`started \\(joining an earlier cycle\\) run \\d+ of transform \\(\\w+, cycle ${cycle}\\)`));
    // At most one run per job per cycle is dependency-triggered (CONTRACT §3): load already succeeded in it.
    expect((await until("the cycle to settle again", settled)).map((x) => [x.job_name, x.status])).toEqual([
      ["extract", "SUCCESS"],
      ["transform", "SUCCESS"],
      ["load", "SUCCESS"],
      ["transform", "SUCCESS"],
    ]);
    const bad = await p.svc(["run", "transform", "--cycle", "ffffffff"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("no cycle ffffffff");
    expect((await p.svc(["run", "transform", "--cycle", "x!"])).code).toBe(2);
  });

  it("a step that did not run in its cycle (paused then) runs there later, with that cycle's outputs", async () => {
    await p.api("POST", "/api/jobs/load/pause"); // load gets no run in the next cycle...
    const first = await runAndWait("extract");
    const cycle = first.cycle_id as string;
    await until("transform to finish", async () => (await p.api<{ runs: RunRow[]; settled: boolean }>("GET", `/api/cycles/${cycle}`)).body.settled || null);
    await p.api("POST", "/api/jobs/load/resume");
    // ...so running it later in that cycle reads that cycle's transform and extract.
    const r = await ok(["run", "load", "--cycle", cycle, "--wait"]);
    expect(r.stdout).toContain("loaded 7\n");
    const runs = (await p.api<{ runs: RunRow[] }>("GET", `/api/cycles/${cycle}`)).body.runs;
    expect(runs.map((x) => [x.job_name, x.status, x.trigger])).toEqual([
      ["extract", "SUCCESS", "manual"],
      ["transform", "SUCCESS", "dependency"],
      ["load", "SUCCESS", "manual"],
    ]);
  });
});

describe("11: alerts, relative times, -q/-v, restart, stop", () => {
  it("svc alerts --failed lists a failed delivery; svc alerts retry ID --wait sends it again", async () => {
    rx.status = 500;
    const before = rx.bodies.length;
    await runAndWait("notifier");
    const failed = await until(
      "the alert to fail",
      async () => (await p.api<{ rows: { id: number; status: string }[] }>("GET", "/api/db/alerts?job=notifier")).body.rows.find((a) => a.status === "failed"),
      20_000,
    );
    const list = (await ok(["alerts", "--failed"])).stdout;
    expect(list).toMatch(/^ID\s+JOB\s+RUN\s+EVENT\s+CHANNEL\s+STATUS\s+ATTEMPTS\s+LAST ATTEMPT\s+ERROR$/m);
    expect(list).toMatch(new RegExp(`^${failed.id}\\s+notifier\\s+\\d+\\s+on_failure\\s+webhook:\\S+\\s+failed\\s+3\\s`, "m"));
    expect((await ok(["alerts", "--json"])).stdout).toContain(`"id": ${failed.id}`);
    rx.status = 200;
    const r = await ok(["alerts", "retry", String(failed.id), "--wait"]);
    expect(r.stdout).toMatch(new RegExp(`^alert ${failed.id} \\(on_failure of notifier to webhook:\\S+\\) delivered`));
    expect(rx.bodies.length).toBeGreaterThan(before + 3);
    const again = await p.svc(["alerts", "retry", String(failed.id)]);
    expect(again.code).toBe(1);
    expect((await p.svc(["alerts", "retry", "999999"])).stderr).toBe("svc: alert 999999 not found (svc alerts lists them)\n");
    expect((await p.svc(["alerts", "--status", "lost"])).code).toBe(2);
  });

  it("audit and history take --since 1h, today, yesterday", async () => {
    const quick = await runAndWait("quick");
    expect((await ok(["audit", "--since", "1h", "--job", "quick"])).stdout).toMatch(new RegExp(`^${quick.id}\\s+quick\\s+SUCCESS`, "m"));
    expect((await ok(["audit", "--since", "tomorrow"])).stdout).toBe("(no runs match)\n");
    expect((await ok(["history", "quick", "--since", "today"])).stdout).toMatch(new RegExp(`^${quick.id}\\s+SUCCESS`, "m"));
    expect((await ok(["history", "quick", "--since", "yesterday", "--until", "1h ago"])).stdout).toBe("(no runs of quick in that time)\n");
    expect((await p.svc(["history", "quick", "--since", "someday"])).code).toBe(2);
  });

  it("-q prints only data and errors; -v says which daemon and each request", async () => {
    expect(await ok(["-q", "pause", "quick"])).toMatchObject({ stdout: "", stderr: "" });
    expect(await ok(["resume", "quick", "-q"])).toMatchObject({ stdout: "", stderr: "" });
    expect((await ok(["-q", "run", "quick"])).stdout).toBe("");
    expect(await ok(["-q", "run", "quick", "--wait"])).toMatchObject({ stdout: "--- attempt 1 ---\nquick\n", stderr: "" });
    expect((await ok(["-q", "status"])).stdout).toMatch(/^JOB/);
    const v = await ok(["-v", "status"]);
    expect(v.stderr).toContain(`svc: daemon: ${p.dataDir}/svcd.sock (Unix socket, project ${p.path("svc.yaml")})`);
    expect(v.stderr).toMatch(/^svc: GET \/api\/jobs -> 200 \(\d+ ms\)$/m);
  });

  it("svc restart stops and starts the daemon, and prints its URL", async () => {
    const before = p.pid();
    const r = await ok(["restart"]);
    expect(r.stdout).toBe(`http://${p.addr()}/\n`);
    expect(r.stderr).toBe(`svc: stopping the daemon (pid ${before}): no job is running\nsvc: stopped the daemon (pid ${before}); starting it again\n`);
    expect(p.pid()).not.toBe(before);
    expect((await ok(["status"])).stdout).toMatch(/^JOB/);
  });

  it("svc stop says which runs it waits for; with no daemon it exits 0 with a note", async () => {
    const id = json<{ run_id: number }>((await ok(["run", "longjob", "--json"])).stdout).run_id;
    await until("longjob to run", async () => (await p.api<RunRow>("GET", `/api/runs/${id}`)).body.status === "RUNNING");
    const pid = p.pid();
    const r = await ok(["stop"]);
    expect(r.stderr).toMatch(
      new RegExp(`^svc: stopping the daemon \\(pid ${pid}\\): waiting for 1 running job to finish: longjob \\(run ${id}\\); after 1m \\(scheduler\\.shutdown_timeout\\) they are killed; \`svc stop --force\` kills them now\n`),
    );
    expect(r.stdout).toBe(`stopped the daemon (pid ${pid})\n`);
    const none = await ok(["stop"]);
    expect(none.stderr).toBe(`svc: no daemon is running for ${p.path("svc.yaml")}: nothing to stop\n`);
    expect(json<{ stopped: boolean }>((await ok(["stop", "--json"])).stdout)).toEqual({ stopped: false, running: false });
  });
});
