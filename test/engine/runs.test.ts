import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isGroupAlive } from "../../src/executor/index.js";
import { EngineError } from "../../src/engine/errors.js";
import { engineKit, type Kit } from "../helpers/engineKit.js";

let kit: Kit | null = null;
afterEach(async () => {
  await kit?.close();
  kit = null;
});

const fast = "executor:\n  kill_grace: 300ms\n";

describe("a manual run through the engine", () => {
  it("goes PENDING -> RUNNING -> SUCCESS with its lines, exit code and job state", async () => {
    kit = await engineKit(`jobs:\n  hello:\n    command: "echo out; echo err >&2"\n`);
    const run = kit.engine.runNow("hello", { reason: "testing", triggeredBy: "cli" });
    const done = await kit.waitRun(run.id, ["SUCCESS", "FAILED"]);
    expect(done.status).toBe("SUCCESS");
    expect(done.exit_code).toBe(0);
    expect(done.reason).toBe("testing");
    expect(done.trigger).toBe("manual");
    expect(done.triggered_by).toBe("cli");
    expect(done.attempt).toBe(1);
    expect(done.duration_ms).toBe(Date.parse(done.finished_at!) - Date.parse(done.started_at!));
    expect(kit.statusesOf(run.id)).toEqual(["PENDING", "RUNNING", "SUCCESS"]);
    expect(kit.lines(run.id, ["stdout"])).toEqual(["--- attempt 1 ---", "out"]);
    expect(kit.lines(run.id, ["stderr"])).toEqual(["err"]);
    const state = kit.store.jobState.get("hello")!;
    expect(state.last_success).toBe(done.finished_at);
    expect(state.lock_pid).toBeNull();
    expect(kit.notes.map((n) => n.event)).toEqual(["on_success"]);
  });

  it("fails with the exit code and fires on_failure under the alert policy", async () => {
    kit = await engineKit(`jobs:\n  bad:\n    command: "exit 3"\n`);
    const run = kit.engine.runNow("bad", { triggeredBy: "cli" });
    const done = await kit.waitRun(run.id, ["FAILED"]);
    expect(done.exit_code).toBe(3);
    expect(done.error).toBe("exit code 3");
    expect(kit.store.jobState.get("bad")!.last_failure).toBe(done.finished_at);
    await kit.waitFor("on_failure", () => kit!.notes.find((n) => n.event === "on_failure"));
  });

  it("runs array commands directly and passes the job env and SVC_* variables", async () => {
    kit = await engineKit(
      `jobs:\n  arr:\n    command: ["/bin/sh", "-c", "echo $GREETING $SVC_JOB $SVC_ATTEMPT; pwd"]\n    env: {GREETING: "hi there"}\n`,
    );
    const run = kit.engine.runNow("arr", { triggeredBy: "cli" });
    await kit.waitRun(run.id, ["SUCCESS"]);
    expect(kit.lines(run.id, ["stdout"]).slice(1)).toEqual(["hi there arr 1", kit.dir]);
  });

  it("records a missing command as a failed run and keeps going", async () => {
    kit = await engineKit(`jobs:\n  nope:\n    command: ["/definitely/not/here"]\n  sh:\n    command: "no-such-command-xyz"\n`);
    const a = kit.engine.runNow("nope", { triggeredBy: "cli" });
    const b = kit.engine.runNow("sh", { triggeredBy: "cli" });
    const ra = await kit.waitRun(a.id, ["FAILED"]);
    const rb = await kit.waitRun(b.id, ["FAILED"]);
    expect(ra.error).toMatch(/command not found|ENOENT/);
    expect(ra.exit_code).toBeNull();
    expect(rb.exit_code).toBe(127);
  });

  it("records a non-executable file as a failed run", async () => {
    kit = await engineKit(`jobs:\n  noexec:\n    command: ["./data.txt"]\n`);
    const { chmodSync, writeFileSync } = await import("node:fs");
    writeFileSync(join(kit.dir, "data.txt"), "not a program");
    chmodSync(join(kit.dir, "data.txt"), 0o644);
    const run = kit.engine.runNow("noexec", { triggeredBy: "cli" });
    const done = await kit.waitRun(run.id, ["FAILED"]);
    expect(done.error).toMatch(/permission denied|EACCES/);
    expect(kit.lines(run.id, ["stderr"]).join("\n")).toMatch(/svc: cannot start/);
  });

  it("rejects a reason over 500 characters and unknown jobs with typed errors", async () => {
    kit = await engineKit(`jobs:\n  a:\n    command: "true"\n`);
    expect(() => kit!.engine.runNow("a", { reason: "x".repeat(501), triggeredBy: "cli" })).toThrow(EngineError);
    expect(() => kit!.engine.runNow("zzz", { triggeredBy: "cli" })).toThrow(/unknown job "zzz"/);
  });
});

describe("retries", () => {
  it("goes RETRYING between attempts and ends FAILED when they run out", async () => {
    kit = await engineKit(`jobs:\n  flaky:\n    command: "echo try; exit 1"\n    retries: 2\n    retry_delay: "fixed:100ms"\n`);
    const run = kit.engine.runNow("flaky", { triggeredBy: "cli" });
    const done = await kit.waitFor("final failure", () => {
      const r = kit!.store.runs.get(run.id)!;
      return r.status === "FAILED" && r.attempt === 3 ? r : null;
    });
    expect(done.attempt).toBe(3);
    expect(kit.statusesOf(run.id)).toEqual([
      "PENDING",
      "RUNNING",
      "FAILED",
      "RETRYING",
      "RUNNING",
      "FAILED",
      "RETRYING",
      "RUNNING",
      "FAILED",
    ]);
    expect(kit.lines(run.id, ["stdout"])).toEqual(["--- attempt 1 ---", "try", "--- attempt 2 ---", "try", "--- attempt 3 ---", "try"]);
    expect(kit.notes.filter((n) => n.event === "on_retry")).toHaveLength(2);
  });

  it("succeeds on a later attempt", async () => {
    kit = await engineKit(`jobs:\n  second:\n    command: "test -f marker && echo ok || { touch marker; exit 1; }"\n    retries: 1\n    retry_delay: "fixed:50ms"\n`);
    const run = kit.engine.runNow("second", { triggeredBy: "cli" });
    const done = await kit.waitRun(run.id, ["SUCCESS"]);
    expect(done.attempt).toBe(2);
  });

  it("while the next attempt runs, the row shows no end of the failed one (finished_at, duration, healthcheck)", async () => {
    kit = await engineKit(`jobs:
  again:
    command: "test -f marker && sleep 0.5 || { touch marker; exit 1; }"
    retries: 1
    retry_delay: "fixed:50ms"
`);
    const run = kit.engine.runNow("again", { triggeredBy: "cli" });
    await kit.waitFor("the failed attempt's end", () => kit!.store.runs.get(run.id)?.status === "RETRYING");
    expect(kit.store.runs.get(run.id)!.finished_at).not.toBeNull();
    const second = await kit.waitFor("attempt 2 RUNNING", () => {
      const r = kit!.store.runs.get(run.id)!;
      return r.status === "RUNNING" && r.attempt === 2 ? r : null;
    });
    expect([second.finished_at, second.duration_ms, second.hc_status]).toEqual([null, null, null]);
    const done = await kit.waitRun(run.id, ["SUCCESS"]);
    expect(done.finished_at).not.toBeNull();
  });
});

describe("only_after_failure's previous run", () => {
  it("is the newest run that ran to an end: a SKIPPED run refused meanwhile (concurrency forbid) does not hide the failure", async () => {
    kit = await engineKit(
      `integrations:\n  hook: {provider: webhook, webhook_url: "http://127.0.0.1:9/x"}\njobs:\n  flip:\n    command: "test -f ok || { touch ok; sleep 0.4; exit 1; }"\n    notify:\n      on_success: {channel: hook, only_after_failure: true}\n`,
    );
    const failing = kit.engine.runNow("flip", { triggeredBy: "cli" });
    await kit.waitRun(failing.id, ["RUNNING"]);
    const refused = kit.engine.runNow("flip", { triggeredBy: "cli" });
    expect((await kit.waitRun(refused.id, ["SKIPPED"])).error).toBe("concurrency forbid");
    await kit.waitRun(failing.id, ["FAILED"]);
    const recovered = kit.engine.runNow("flip", { triggeredBy: "cli" });
    await kit.waitRun(recovered.id, ["SUCCESS"]);
    await kit.waitFor("the on_success note", () => kit!.notes.find((n) => n.event === "on_success" && n.run.id === recovered.id), 5_000);
    expect(kit.notes.find((n) => n.event === "on_success")!.previousStatus).toBe("FAILED");
  });
});

describe("timeouts and cancel", () => {
  it("kills the whole process group on timeout, grandchildren included", async () => {
    kit = await engineKit(`jobs:\n  slow:\n    command: "sleep 100 & sleep 100 & echo started; wait"\n    timeout: 400ms\n`, { daemon: fast });
    const run = kit.engine.runNow("slow", { triggeredBy: "cli" });
    const running = await kit.waitRun(run.id, ["RUNNING"]);
    const done = await kit.waitRun(run.id, ["FAILED"]);
    expect(done.error).toBe("timeout after 400ms");
    expect(done.exit_code).toBeNull();
    await kit.waitFor("group gone", () => !isGroupAlive(running.pid!), 5_000);
  });

  it("sends SIGKILL after the grace to a job that ignores SIGTERM", async () => {
    kit = await engineKit(`jobs:\n  stubborn:\n    command: "trap '' TERM; echo ready; while true; do sleep 0.05; done"\n    timeout: 300ms\n`, { daemon: fast });
    const run = kit.engine.runNow("stubborn", { triggeredBy: "cli" });
    const done = await kit.waitRun(run.id, ["FAILED"]);
    expect(done.error).toBe("timeout after 300ms");
  });

  it("cancel ends the run FAILED with error cancelled and no retry", async () => {
    kit = await engineKit(`jobs:\n  long:\n    command: "sleep 30"\n    retries: 3\n`, { daemon: fast });
    const run = kit.engine.runNow("long", { triggeredBy: "cli" });
    await kit.waitRun(run.id, ["RUNNING"]);
    kit.engine.cancel("long");
    const done = await kit.waitRun(run.id, ["FAILED"]);
    expect(done.error).toBe("cancelled");
    expect(done.attempt).toBe(1);
    expect(() => kit!.engine.cancel("long")).toThrow(/no RUNNING or RETRYING run/);
  });

  it("cancel during a retry delay ends the run", async () => {
    kit = await engineKit(`jobs:\n  f:\n    command: "exit 1"\n    retries: 3\n    retry_delay: "fixed:1h"\n`);
    const run = kit.engine.runNow("f", { triggeredBy: "cli" });
    await kit.waitRun(run.id, ["RETRYING"]);
    kit.engine.cancel("f");
    const done = await kit.waitRun(run.id, ["FAILED"]);
    expect(done).toMatchObject({ error: "cancelled", next_attempt_at: null });
    // From its start to the cancel, not the first attempt's duration: the timeline places the run by it.
    expect(done.duration_ms).toBe(Date.parse(done.finished_at!) - Date.parse(done.started_at!));
    // As a cancelled RUNNING run: on_failure (alert) tells, and the job's last failure is the cancel.
    await kit.waitFor("the on_failure alert", () => kit!.notes.some((n) => n.event === "on_failure" && n.run.id === run.id), 5_000);
    expect(kit.notes.map((n) => n.event)).toEqual(["on_retry", "on_failure"]);
    expect(kit.store.jobState.get("f")!.last_failure).toBe(done.finished_at);
  });
});

describe("the pool", () => {
  it("keeps FIFO order with pool_size 1 and skip acts on the oldest PENDING run", async () => {
    kit = await engineKit(
      `jobs:\n  block:\n    command: "sleep 0.4"\n  a:\n    command: "echo a"\n  b:\n    command: "echo b"\n  c:\n    command: "echo c"\n`,
      { daemon: "executor:\n  pool_size: 1\n" },
    );
    const blocker = kit.engine.runNow("block", { triggeredBy: "cli" });
    const a = kit.engine.runNow("a", { triggeredBy: "cli" });
    const b = kit.engine.runNow("b", { triggeredBy: "cli" });
    const c = kit.engine.runNow("c", { triggeredBy: "cli" });
    expect(kit.store.runs.get(a.id)!.status).toBe("PENDING");
    const skipped = kit.engine.skip("b", { by: "cli" });
    expect(skipped.id).toBe(b.id);
    expect(skipped.status).toBe("SKIPPED");
    expect(() => kit!.engine.skip("b", { by: "cli" })).toThrow(/no PENDING run/);
    await kit.waitRun(c.id, ["SUCCESS"]);
    const starts = kit.transitions.filter((t) => t.to === "RUNNING").map((t) => t.id);
    expect(starts).toEqual([blocker.id, a.id, c.id]);
  });

  it("counts a RETRYING run against max_concurrent_jobs until it ends", async () => {
    kit = await engineKit(
      `jobs:\n  flaky:\n    command: "exit 1"\n    retries: 3\n    retry_delay: "fixed:1h"\n  a:\n    command: "echo a"\n  b:\n    command: "echo b"\n`,
      { daemon: "scheduler:\n  max_concurrent_jobs: 1\n" },
    );
    const flaky = kit.engine.runNow("flaky", { triggeredBy: "cli" });
    await kit.waitRun(flaky.id, ["RETRYING"]);
    const a = kit.engine.runNow("a", { triggeredBy: "cli" });
    const b = kit.engine.runNow("b", { triggeredBy: "cli" });
    await new Promise((r) => setTimeout(r, 300));
    expect([kit.store.runs.get(a.id)!.status, kit.store.runs.get(b.id)!.status]).toEqual(["PENDING", "PENDING"]);
    // The cancel ends the RETRYING run: its slot goes to a, then to b, one at a time.
    kit.engine.cancel("flaky");
    await kit.waitRun(b.id, ["SUCCESS"]);
    const starts = kit.transitions.filter((t) => t.to === "RUNNING").map((t) => t.id);
    expect(starts).toEqual([flaky.id, a.id, b.id]);
    const aDone = kit.store.runs.get(a.id)!;
    expect(Date.parse(kit.store.runs.get(b.id)!.started_at!)).toBeGreaterThanOrEqual(Date.parse(aDone.finished_at!));
  });
});

describe("max_concurrent_jobs and waiting runs", () => {
  it("a due retry starts even behind an older PENDING run waiting for a slot (it holds its slot already)", async () => {
    kit = await engineKit(
      `jobs:\n  v:\n    command: "exit 1"\n  d:\n    command: "echo d"\n    frequency: manual\n    depends_on: [v]\n  a:\n    command: "exit 1"\n    retries: 1\n    retry_delay: "fixed:1s"\n`,
      { daemon: "scheduler:\n  max_concurrent_jobs: 1\n" },
    );
    await kit.waitRun(kit.engine.runNow("v", { triggeredBy: "cli" }).id, ["FAILED"]);
    const d = kit.engine.runNow("d", { triggeredBy: "cli" }); // its gate is shut: v's last run FAILED
    const a = kit.engine.runNow("a", { triggeredBy: "cli" });
    await kit.waitRun(a.id, ["RETRYING"]);
    // a's retry is due after 1 s; d, older, waits for a slot a holds: a must still get its second attempt.
    const done = await kit.waitRun(a.id, ["FAILED"], 8_000);
    expect(done.attempt).toBe(2);
    expect(kit.store.runs.get(d.id)!.status).toBe("PENDING");
  });
});

describe("the gate's most recent finished run", () => {
  it("is the upstream's latest run that ran: a forbid refusal (SKIPPED) after an older success does not shut it", async () => {
    kit = await engineKit(
      `jobs:\n  w:\n    command: "sleep 0.5"\n    concurrency: forbid\n  d:\n    command: "echo d"\n    frequency: manual\n    depends_on: [w]\n`,
    );
    const first = kit.engine.runNow("w", { triggeredBy: "cli" });
    await kit.waitRun(first.id, ["RUNNING"]);
    const refused = kit.engine.runNow("w", { triggeredBy: "cli" }); // forbid: SKIPPED, a newer id
    expect(kit.store.runs.get(refused.id)!.status).toBe("SKIPPED");
    await kit.waitRun(first.id, ["SUCCESS"]);
    const d = kit.engine.runNow("d", { triggeredBy: "cli" });
    await kit.waitRun(d.id, ["SUCCESS"], 5_000);
  });
});

describe("concurrency policies", () => {
  it("forbid records the new run SKIPPED while one runs", async () => {
    kit = await engineKit(`jobs:\n  j:\n    command: "sleep 0.5"\n`);
    const first = kit.engine.runNow("j", { triggeredBy: "cli" });
    await kit.waitRun(first.id, ["RUNNING"]);
    const second = kit.engine.runNow("j", { triggeredBy: "cli" });
    const s = await kit.waitRun(second.id, ["SKIPPED"]);
    expect(s.error).toBe("concurrency forbid");
    await kit.waitRun(first.id, ["SUCCESS"]);
  });

  it("replace kills the old run and starts the new", async () => {
    kit = await engineKit(`jobs:\n  j:\n    command: "sleep 30"\n    concurrency: replace\n`, { daemon: fast });
    const first = kit.engine.runNow("j", { triggeredBy: "cli" });
    await kit.waitRun(first.id, ["RUNNING"]);
    const second = kit.engine.runNow("j", { triggeredBy: "cli" });
    const old = await kit.waitRun(first.id, ["FAILED"]);
    expect(old.error).toBe(`replaced by run ${second.id}`);
    await kit.waitRun(second.id, ["RUNNING"]);
  });

  it("allow runs both at once", async () => {
    kit = await engineKit(`jobs:\n  j:\n    command: "sleep 0.3"\n    concurrency: allow\n`);
    const a = kit.engine.runNow("j", { triggeredBy: "cli" });
    const b = kit.engine.runNow("j", { triggeredBy: "cli" });
    const active = await kit.waitFor("both running", () => (kit!.engine.activeRuns("j").length === 2 ? kit!.engine.activeRuns("j") : null));
    expect([...active].sort((x, y) => x - y)).toEqual([a.id, b.id]);
    const ra = await kit.waitRun(a.id, ["SUCCESS", "FAILED", "SKIPPED"]);
    const rb = await kit.waitRun(b.id, ["SUCCESS", "FAILED", "SKIPPED"]);
    expect([ra.status, rb.status]).toEqual(["SUCCESS", "SUCCESS"]);
    // Each started before the other finished: they overlapped.
    expect(Date.parse(ra.started_at!)).toBeLessThan(Date.parse(rb.finished_at!));
    expect(Date.parse(rb.started_at!)).toBeLessThan(Date.parse(ra.finished_at!));
  });
});

describe("shutdown", () => {
  it("graceful stop lets a running job finish", async () => {
    kit = await engineKit(`jobs:\n  j:\n    command: "sleep 0.3; echo done"\n`);
    const run = kit.engine.runNow("j", { triggeredBy: "cli" });
    await kit.waitRun(run.id, ["RUNNING"]);
    await kit.engine.stop({ force: false });
    const done = kit.store.runs.get(run.id)!;
    expect(done.status).toBe("SUCCESS");
    expect(kit.lines(run.id, ["stdout"])).toContain("done");
  });

  it("forced stop kills the groups at once and records FAILED", async () => {
    kit = await engineKit(`jobs:\n  j:\n    command: "sleep 30 & sleep 30; echo never"\n`);
    const run = kit.engine.runNow("j", { triggeredBy: "cli" });
    const running = await kit.waitRun(run.id, ["RUNNING"]);
    const t0 = Date.now();
    await kit.engine.stop({ force: true });
    expect(Date.now() - t0).toBeLessThan(5_000);
    const done = kit.store.runs.get(run.id)!;
    expect(done.status).toBe("FAILED");
    expect(done.error).toBe("killed: forced daemon stop");
    await kit.waitFor("group gone", () => !isGroupAlive(running.pid!), 5_000);
  });

  it("graceful stop kills what is left after shutdown_timeout", async () => {
    kit = await engineKit(`jobs:\n  j:\n    command: "sleep 30"\n`, { daemon: "scheduler:\n  shutdown_timeout: 300ms\n" });
    const run = kit.engine.runNow("j", { triggeredBy: "cli" });
    await kit.waitRun(run.id, ["RUNNING"]);
    await kit.engine.stop({ force: false });
    expect(kit.store.runs.get(run.id)!.error).toBe("killed: daemon shutdown timeout");
  });
});

describe("bad jobs never stop the engine", () => {
  it("survives a job printing a 10 MB line and one that closes stdout and keeps running", async () => {
    kit = await engineKit(
      `jobs:\n  big:\n    command: "head -c 10000000 /dev/zero | tr '\\\\0' x; echo"\n  closer:\n    command: "exec >&-; sleep 0.3; exit 4"\n`,
    );
    const a = kit.engine.runNow("big", { triggeredBy: "cli" });
    const b = kit.engine.runNow("closer", { triggeredBy: "cli" });
    expect((await kit.waitRun(a.id, ["SUCCESS"], 30_000)).status).toBe("SUCCESS");
    const rb = await kit.waitRun(b.id, ["FAILED"]);
    expect(rb.exit_code).toBe(4);
    const total = kit.lines(a.id, ["stdout"]).slice(1).reduce((n, l) => n + l.length, 0);
    expect(total).toBe(10_000_000);
    expect(existsSync(join(kit.dir, ".svc", "svc.db"))).toBe(true);
  });
});
