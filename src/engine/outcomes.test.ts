/**
 * decide() row by row: the failure-policy table (alert, skip, stop, ignore, with transitive skip),
 * retries (left, exhausted, not retryable), success and dependency triggering, dispatch errors,
 * lost runs, and the concurrency-policy table (forbid, replace, allow), each with fixed inputs
 * and the exact effects it must return. No database, clock or process: the engine tests in
 * test/engine/ check the same rows end to end.
 */
import { describe, expect, it } from "vitest";
import { parseProjectText } from "../config/index.js";
import type { ProjectConfig } from "../config/types.js";
import type { RunRecord, RunStatus } from "../store/types.js";
import type { AttemptResult } from "./attempt.js";
import { downstreamIndex } from "./context.js";
import { decide, type BackfillFacts, type Effect, type Facts, type Situation } from "./outcomes.js";

const NOW = Date.parse("2027-01-10T10:00:00.000Z");
const AT = new Date(NOW).toISOString();
const iso = (ms: number) => new Date(ms).toISOString();
const STARTED = NOW - 5_000;
/** What a run created in a cycle takes from it (its slot, its backfill) and from its job (param defaults): none here. */
const FROM_CYCLE = { scheduled_at: null, backfill_id: null, params: {}, secretParams: [] };

/** extract -> transform -> load (after:), report depends on extract but runs daily (a gate, never triggered). */
function project(extract: string): ProjectConfig {
  const yaml = `jobs:
  extract:
    command: ./extract.sh
    tags: [etl]
${extract.replace(/^/gm, "    ")}
  transform:
    command: ./transform.sh
    frequency: after:extract
    tags: [etl, t]
  load:
    command: ./load.sh
    frequency: after:transform
  report:
    command: ./report.sh
    depends_on: [extract]
    frequency: daily
    time: "0600"
  side:
    command: ./side.sh
`;
  const r = parseProjectText(yaml, "/p/svc.yaml", {});
  if (!r.ok) throw new Error(r.errors.map((e) => e.message).join("\n"));
  return r.value;
}

/** The trace that transform (after:extract) will not run in cycle c1, left when extract's run 1 fails for good. */
function transformNotRun(error: string): Effect {
  return {
    kind: "nonRun",
    entry: { job_name: "transform", reason: "upstream_failed", detail: `upstream extract FAILED (run 1: ${error})`, cycle_id: "c1", upstream: "extract", upstream_run_id: 1 },
  };
}

function row(id: number, job: string, status: RunStatus, over: Partial<RunRecord> = {}): RunRecord {
  return {
    id,
    job_name: job,
    status,
    attempt: 1,
    trigger: "schedule",
    triggered_by: "scheduler",
    reason: null,
    cycle_id: "c1",
    tags: [],
    scheduled_for: null,
    params: {},
    scheduled_at: null,
    backfill_id: null,
    created_at: iso(STARTED - 1_000),
    started_at: status === "PENDING" ? null : iso(STARTED),
    finished_at: null,
    exit_code: null,
    sla_breached: 0,
    hc_status: null,
    pid: status === "RUNNING" ? 4242 : null,
    pid_start: null,
    error: null,
    duration_ms: null,
    next_attempt_at: null,
    ...over,
  };
}

interface World {
  project: ProjectConfig;
  cycle?: RunRecord[];
  halted?: boolean;
  paused?: string[];
  previous?: RunStatus | null;
  /** The job's other active runs; undefined: decide must not ask. */
  others?: { id: number; status: RunStatus; pid?: number | null }[];
  gate?: boolean;
  /** The run's backfill facts; undefined: decide must not ask. */
  backfill?: BackfillFacts | null;
}

function factsOf(w: World, run: RunRecord): Facts {
  const index = downstreamIndex(w.project);
  const mustNotAsk = (what: string) => () => {
    throw new Error(`decide asked for ${what}`);
  };
  return {
    run,
    job: w.project.jobs.get(run.job_name),
    cycle: { halted: w.halted ?? false, runs: w.cycle ? () => w.cycle! : mustNotAsk("the cycle's runs") },
    downstreams: { of: (j) => index.get(j) ?? [], job: (n) => w.project.jobs.get(n), paused: (n) => (w.paused ?? []).includes(n) },
    previousStatus: w.previous === undefined ? mustNotAsk("the previous status") : () => w.previous!,
    othersActive: w.others ? () => w.others!.map((o) => ({ pid: null, ...o })) : mustNotAsk("the job's other runs"),
    gateOpen: w.gate === undefined ? mustNotAsk("the gate") : () => w.gate!,
    backfill: w.backfill === undefined ? mustNotAsk("the backfill") : () => w.backfill!,
  };
}

const run = (w: World, r: RunRecord, s: Situation, random = 0.5): Effect[] => decide(s, factsOf(w, r), NOW, () => random);

const failedAttempt: AttemptResult = { exitCode: 3, ok: false, hc: null, error: "exit code 3", retryable: true };
const ended = (result: AttemptResult): Situation => ({ kind: "ended", result, finishedAt: NOW });
const endPatch = { exit_code: 3, hc_status: null, finished_at: AT, duration_ms: 5_000, pid: null };
/** The first two effects of every failed end. */
const failedEnd = (runId = 1, job = "extract", error = "exit code 3"): Effect[] => [
  { kind: "transition", runId, from: "RUNNING", to: "FAILED", patch: { ...endPatch, error } },
  { kind: "jobState", job, patch: { last_failure: AT, lock_pid: null } },
];

describe("the failure-policy table (retries exhausted)", () => {
  it("alert: FAILED, on_failure fires, no downstream run (a trace says why)", () => {
    const w = { project: project("on_failure: alert"), cycle: [row(1, "extract", "RUNNING")] };
    expect(run(w, row(1, "extract", "RUNNING"), ended(failedAttempt))).toEqual([
      ...failedEnd(),
      transformNotRun("exit code 3"),
      { kind: "notify", event: "on_failure", runId: 1, previousStatus: null },
    ]);
  });

  it("ignore: FAILED, logged, nothing else (but the trace of the downstream run that will not happen)", () => {
    const w = { project: project("on_failure: ignore"), cycle: [row(1, "extract", "RUNNING")] };
    expect(run(w, row(1, "extract", "RUNNING"), ended(failedAttempt))).toEqual([
      ...failedEnd(),
      transformNotRun("exit code 3"),
      { kind: "log", level: "info", fields: { job: "extract", run_id: 1, error: "exit code 3" }, message: "run failed (on_failure: ignore)" },
    ]);
  });

  it("skip: SKIPPED, and every dependency-triggered descendant gets a SKIPPED row (transitively); a time-scheduled one does not", () => {
    const w = { project: project("on_failure: skip"), cycle: [row(1, "extract", "RUNNING")] };
    expect(run(w, row(1, "extract", "RUNNING"), ended(failedAttempt))).toEqual([
      ...failedEnd(),
      { kind: "transition", runId: 1, from: "FAILED", to: "SKIPPED", patch: {} },
      {
        kind: "create",
        run: { job_name: "transform", trigger: "dependency", triggered_by: "extract", cycle_id: "c1", status: "SKIPPED", error: "upstream skipped: extract", tags: ["etl", "t"], ...FROM_CYCLE },
      },
      {
        kind: "create",
        run: { job_name: "load", trigger: "dependency", triggered_by: "transform", cycle_id: "c1", status: "SKIPPED", error: "upstream skipped: transform", tags: [], ...FROM_CYCLE },
      },
    ]);
  });

  it("skip: a descendant already PENDING in the cycle is skipped instead of a new row", () => {
    const w = { project: project("on_failure: skip"), cycle: [row(1, "extract", "RUNNING"), row(2, "transform", "PENDING")] };
    expect(run(w, row(1, "extract", "RUNNING"), ended(failedAttempt)).slice(3)).toEqual([
      { kind: "transition", runId: 2, from: "PENDING", to: "SKIPPED", patch: { error: "upstream skipped: extract", finished_at: AT } },
      {
        kind: "create",
        run: { job_name: "load", trigger: "dependency", triggered_by: "transform", cycle_id: "c1", status: "SKIPPED", error: "upstream skipped: transform", tags: [], ...FROM_CYCLE },
      },
    ]);
  });

  it("skip: a descendant that already ran in the cycle is left alone, with what follows it", () => {
    const w = { project: project("on_failure: skip"), cycle: [row(1, "extract", "RUNNING"), row(2, "transform", "SUCCESS")] };
    expect(run(w, row(1, "extract", "RUNNING"), ended(failedAttempt)).slice(3)).toEqual([]);
  });

  it("stop: the cycle halts, its PENDING runs are SKIPPED, RUNNING and RETRYING runs downstream are stopped, others run on", () => {
    const cycle = [
      row(1, "extract", "RUNNING"),
      row(2, "transform", "RUNNING"),
      row(3, "side", "PENDING"),
      row(4, "report", "RUNNING"), // time-scheduled, but downstream of extract in the graph: stopped too
      row(5, "load", "RETRYING"),
      row(6, "side", "RUNNING"), // not downstream: runs on
    ];
    const w = { project: project("on_failure: stop"), cycle };
    expect(run(w, row(1, "extract", "RUNNING"), ended(failedAttempt))).toEqual([
      ...failedEnd(),
      { kind: "halt", cycleId: "c1" },
      { kind: "stop", runId: 2, reason: "pipeline stopped" },
      { kind: "transition", runId: 3, from: "PENDING", to: "SKIPPED", patch: { error: "pipeline stopped", finished_at: AT } },
      { kind: "stop", runId: 4, reason: "pipeline stopped" },
      { kind: "stop", runId: 5, reason: "pipeline stopped" },
      { kind: "log", level: "warn", fields: { job: "extract", run_id: 1, cycle_id: "c1" }, message: "pipeline stopped (on_failure: stop)" },
    ]);
  });
});

describe("retries", () => {
  it("retries while attempts remain: RETRYING at now + the fixed delay, a wake-up then, on_retry", () => {
    const w = { project: project("retries: 2\nretry_delay: fixed:10s") };
    expect(run(w, row(1, "extract", "RUNNING"), ended(failedAttempt))).toEqual([
      ...failedEnd(),
      { kind: "transition", runId: 1, from: "FAILED", to: "RETRYING", patch: { next_attempt_at: iso(NOW + 10_000) } },
      { kind: "wake", at: NOW + 10_000 },
      { kind: "notify", event: "on_retry", runId: 1, previousStatus: null },
    ]);
  });

  it.each([
    [1, 0.5, 30_000],
    [2, 0.5, 60_000],
    [2, 0, 45_000],
    [3, 0.999999, 150_000],
  ])("exponential: after attempt %i with random %f the retry waits %i ms", (attempt, random, delay) => {
    const w = { project: project("retries: 5") };
    const effects = run(w, row(1, "extract", "RUNNING", { attempt }), ended(failedAttempt), random);
    expect(effects[2]).toEqual({ kind: "transition", runId: 1, from: "FAILED", to: "RETRYING", patch: { next_attempt_at: iso(NOW + delay) } });
  });

  it("retries exhausted (attempt 1 + retries): the failure policy instead", () => {
    const w = { project: project("retries: 2\non_failure: alert"), cycle: [row(1, "extract", "RUNNING")] };
    expect(run(w, row(1, "extract", "RUNNING", { attempt: 3 }), ended(failedAttempt))).toEqual([
      ...failedEnd(),
      transformNotRun("exit code 3"),
      { kind: "notify", event: "on_failure", runId: 1, previousStatus: null },
    ]);
  });

  it("a stopped attempt (cancel, replace, pipeline stop) is not retried even with retries left", () => {
    const w = { project: project("retries: 2"), cycle: [row(1, "extract", "RUNNING")] };
    const cancelled: AttemptResult = { exitCode: null, ok: false, hc: null, error: "cancelled", retryable: false };
    expect(run(w, row(1, "extract", "RUNNING"), ended(cancelled))).toEqual([
      { kind: "transition", runId: 1, from: "RUNNING", to: "FAILED", patch: { ...endPatch, exit_code: null, error: "cancelled" } },
      { kind: "jobState", job: "extract", patch: { last_failure: AT, lock_pid: null } },
      transformNotRun("cancelled"),
      { kind: "notify", event: "on_failure", runId: 1, previousStatus: null },
    ]);
  });

  it.each([
    ["alert", [{ kind: "notify", event: "on_failure", runId: 1, previousStatus: null }]],
    ["ignore", []],
    ["skip", []],
    ["stop", []],
  ] as const)("a RETRYING run stopped for good (cancel) ends as a stopped RUNNING one does: on_failure %s", (policy, after) => {
    const w = { project: project(`retries: 2\non_failure: ${policy}`), cycle: [row(1, "extract", "RETRYING", { next_attempt_at: iso(NOW + 60_000) })] };
    expect(run(w, row(1, "extract", "RETRYING", { next_attempt_at: iso(NOW + 60_000) }), { kind: "stopped", reason: "cancelled" })).toEqual([
      { kind: "transition", runId: 1, from: "RETRYING", to: "FAILED", patch: { error: "cancelled", finished_at: AT, duration_ms: 5_000, next_attempt_at: null } },
      { kind: "jobState", job: "extract", patch: { last_failure: AT } },
      transformNotRun("cancelled"),
      ...after,
    ]);
  });
});

describe("SLA at the run's end (SPEC rule 8)", () => {
  it("a run that passed its SLA and ended between two ticks is marked and reported, before its end's notification", () => {
    const w = { project: project("sla: 1s"), cycle: [row(1, "extract", "RUNNING")] };
    expect(run(w, row(1, "extract", "RUNNING"), ended({ ...failedAttempt, retryable: false }))).toEqual([
      { kind: "transition", runId: 1, from: "RUNNING", to: "FAILED", patch: { ...endPatch, sla_breached: 1, error: "exit code 3" } },
      { kind: "notify", event: "on_sla_breach", runId: 1, previousStatus: null },
      { kind: "jobState", job: "extract", patch: { last_failure: AT, lock_pid: null } },
      transformNotRun("exit code 3"),
      { kind: "notify", event: "on_failure", runId: 1, previousStatus: null },
    ]);
  });

  it("not twice (the tick reported it), and not within the SLA", () => {
    const once = { project: project("sla: 1s"), cycle: [row(1, "extract", "RUNNING", { sla_breached: 1 })] };
    const marked = run(once, row(1, "extract", "RUNNING", { sla_breached: 1 }), ended({ ...failedAttempt, retryable: false }));
    expect(marked.filter((e) => e.kind === "notify").map((e) => (e as { event: string }).event)).toEqual(["on_failure"]);
    const within = { project: project("sla: 10s"), cycle: [row(1, "extract", "RUNNING")] };
    const effects = run(within, row(1, "extract", "RUNNING"), ended({ ...failedAttempt, retryable: false }));
    expect(effects[0]).toEqual({ kind: "transition", runId: 1, from: "RUNNING", to: "FAILED", patch: { ...endPatch, error: "exit code 3" } });
    expect(effects.filter((e) => e.kind === "notify").map((e) => (e as { event: string }).event)).toEqual(["on_failure"]);
  });
});

describe("success and dependency triggering", () => {
  const ok: AttemptResult = { exitCode: 0, ok: true, hc: null, error: null, retryable: true };
  const successEnd: Effect[] = [
    { kind: "transition", runId: 1, from: "RUNNING", to: "SUCCESS", patch: { ...endPatch, exit_code: 0, error: null } },
    { kind: "jobState", job: "extract", patch: { lock_pid: null, last_success: AT } },
    { kind: "notify", event: "on_success", runId: 1, previousStatus: null },
  ];
  const transformRun: Effect = {
    kind: "create",
    run: { job_name: "transform", trigger: "dependency", triggered_by: "extract", cycle_id: "c1", tags: ["etl", "t"], ...FROM_CYCLE },
  };

  it("a dependency-triggered run takes its cycle's slot and backfill, and its own job's param defaults (secret names kept)", () => {
    const r = parseProjectText(
      `jobs:\n  extract:\n    command: x\n    frequency: hourly\n  transform:\n    command: y\n    frequency: after:extract\n    params:\n      mode: {default: full}\n      key: {secret: true, default: k}\n`,
      "/p/svc.yaml",
      {},
    );
    if (!r.ok) throw new Error(r.errors.map((e) => e.message).join("\n"));
    const root = row(1, "extract", "RUNNING", { scheduled_at: "2027-01-10T09:00:00.000Z", backfill_id: 7 });
    const w = { project: r.value, cycle: [root], previous: null };
    expect(run(w, root, ended(ok)).filter((e) => e.kind === "create")).toEqual([
      {
        kind: "create",
        run: {
          job_name: "transform",
          trigger: "dependency",
          triggered_by: "extract",
          cycle_id: "c1",
          tags: [],
          scheduled_at: "2027-01-10T09:00:00.000Z",
          backfill_id: 7,
          params: { mode: "full", key: "k" },
          secretParams: ["key"],
        },
      },
    ]);
  });

  it("SUCCESS, on_success, one PENDING run of each dependency-triggered downstream job", () => {
    const w = { project: project(""), cycle: [row(1, "extract", "RUNNING")] };
    expect(run(w, row(1, "extract", "RUNNING"), ended(ok))).toEqual([...successEnd, transformRun]);
  });

  it("on_success carries the previous status when an only_after_failure entry needs it (and only then is it read)", () => {
    const notify = 'notify:\n  on_success:\n    - {channel: "webhook:https://hooks.example/svc", only_after_failure: true}';
    const w = { project: project(notify), cycle: [row(1, "extract", "RUNNING")], previous: "FAILED" as const };
    expect(run(w, row(1, "extract", "RUNNING"), ended(ok)).slice(0, 3)).toEqual([
      ...successEnd.slice(0, 2),
      { kind: "notify", event: "on_success", runId: 1, previousStatus: "FAILED" },
    ]);
  });

  it.each(["PENDING", "RUNNING", "RETRYING", "SUCCESS"] as const)("a downstream run already %s in the cycle is reused, not doubled", (status) => {
    const w = { project: project(""), cycle: [row(1, "extract", "RUNNING"), row(2, "transform", status)] };
    expect(run(w, row(1, "extract", "RUNNING"), ended(ok))).toEqual(successEnd);
  });

  it.each(["FAILED", "SKIPPED"] as const)("a downstream run %s in the cycle does not stop a new one (a manual retry leads on)", (status) => {
    const w = { project: project(""), cycle: [row(1, "extract", "RUNNING"), row(2, "transform", status)] };
    expect(run(w, row(1, "extract", "RUNNING"), ended(ok))).toEqual([...successEnd, transformRun]);
  });

  it("a paused downstream job is not triggered (logged, and a trace says why)", () => {
    const w = { project: project(""), cycle: [row(1, "extract", "RUNNING")], paused: ["transform"] };
    expect(run(w, row(1, "extract", "RUNNING"), ended(ok))).toEqual([
      ...successEnd,
      { kind: "log", level: "info", fields: { job: "transform", upstream: "extract", cycle_id: "c1" }, message: "job is paused: not triggered" },
      {
        kind: "nonRun",
        entry: {
          job_name: "transform",
          reason: "paused",
          detail: "paused: not triggered when extract succeeded (run 1)",
          cycle_id: "c1",
          upstream: "extract",
          upstream_run_id: 1,
        },
      },
    ]);
  });

  it("a failed end leaves no trace for a downstream job that already has a live run in the cycle, nor for a time-scheduled one", () => {
    const w = { project: project("on_failure: alert"), cycle: [row(1, "extract", "RUNNING"), row(2, "transform", "PENDING")] };
    const effects = run(w, row(1, "extract", "RUNNING"), ended({ exitCode: 3, ok: false, hc: null, error: "exit code 3", retryable: true }));
    expect(effects.filter((e) => e.kind === "nonRun")).toEqual([]);
  });

  it("nothing new in a halted cycle", () => {
    const w = { project: project(""), halted: true };
    expect(run(w, row(1, "extract", "RUNNING"), ended(ok))).toEqual(successEnd);
  });

  it("a healthcheck that failed with warn_only: SUCCESS with its error, on_sla_breach too", () => {
    const w = { project: project(""), cycle: [], previous: null };
    const warned: AttemptResult = { exitCode: 0, ok: true, hc: "warn", error: "healthcheck failed (exit code 1)", retryable: true };
    expect(run(w, row(1, "extract", "RUNNING"), ended(warned)).slice(0, 4)).toEqual([
      { kind: "transition", runId: 1, from: "RUNNING", to: "SUCCESS", patch: { ...endPatch, exit_code: 0, hc_status: "warn", error: "healthcheck failed (exit code 1)" } },
      { kind: "jobState", job: "extract", patch: { lock_pid: null, last_success: AT } },
      { kind: "notify", event: "on_success", runId: 1, previousStatus: null },
      { kind: "notify", event: "on_sla_breach", runId: 1, previousStatus: null },
    ]);
  });
});

describe("dispatch errors and lost runs", () => {
  it("a dispatch error: FAILED with the attempt and the reason in the log, never retried", () => {
    const w = { project: project("retries: 3"), cycle: [row(1, "extract", "PENDING")] };
    const error = "dispatch: no value for outputs.x.y in this cycle (c1)";
    expect(run(w, row(1, "extract", "PENDING"), { kind: "dispatchFailed", attemptNo: 1, error })).toEqual([
      { kind: "transition", runId: 1, from: "PENDING", to: "FAILED", patch: { attempt: 1, error, finished_at: AT, duration_ms: 0 } },
      { kind: "logLine", runId: 1, stream: "stderr", line: `svc: ${error}` },
      { kind: "jobState", job: "extract", patch: { last_failure: AT } },
      transformNotRun(error),
      { kind: "notify", event: "on_failure", runId: 1, previousStatus: null },
    ]);
  });

  it("a run lost by the previous daemon: FAILED, then retried by policy", () => {
    const w = { project: project("retries: 1\nretry_delay: fixed:5s") };
    expect(run(w, row(1, "extract", "RUNNING"), { kind: "lost" })).toEqual([
      { kind: "transition", runId: 1, from: "RUNNING", to: "FAILED", patch: { error: "daemon restarted, process lost", finished_at: AT, duration_ms: 5_000, pid: null } },
      { kind: "jobState", job: "extract", patch: { last_failure: AT } },
      { kind: "transition", runId: 1, from: "FAILED", to: "RETRYING", patch: { next_attempt_at: iso(NOW + 5_000) } },
      { kind: "wake", at: NOW + 5_000 },
      { kind: "notify", event: "on_retry", runId: 1, previousStatus: null },
    ]);
  });

  it("a lost run of a job no longer in svc.yaml: FAILED, nothing else", () => {
    const w = { project: project("") };
    expect(run(w, row(1, "gone", "RUNNING"), { kind: "lost" })).toEqual([
      { kind: "transition", runId: 1, from: "RUNNING", to: "FAILED", patch: { error: "daemon restarted, process lost", finished_at: AT, duration_ms: 5_000, pid: null } },
      { kind: "jobState", job: "gone", patch: { last_failure: AT } },
    ]);
  });
});

describe("the concurrency-policy table (a new run ready while another runs)", () => {
  const ready: Situation = { kind: "ready" };
  const others = [
    { id: 9, status: "RUNNING" as const },
    { id: 10, status: "RETRYING" as const },
  ];

  it("forbid: the new run is SKIPPED (concurrency forbid)", () => {
    const w = { project: project("concurrency: forbid"), gate: true, others: [others[0]!] };
    expect(run(w, row(1, "extract", "PENDING"), ready)).toEqual([
      { kind: "transition", runId: 1, from: "PENDING", to: "SKIPPED", patch: { error: "concurrency forbid", finished_at: AT } },
    ]);
  });

  it("forbid with nothing else active: starts attempt 1", () => {
    const w = { project: project("concurrency: forbid"), gate: true, others: [] };
    expect(run(w, row(1, "extract", "PENDING"), ready)).toEqual([{ kind: "start", runId: 1, attemptNo: 1 }]);
  });

  it("replace: every other active run is stopped (replaced by run N), then the new one starts", () => {
    const w = { project: project("concurrency: replace"), gate: true, others };
    expect(run(w, row(1, "extract", "PENDING"), ready)).toEqual([
      { kind: "stop", runId: 9, reason: "replaced by run 1" },
      { kind: "stop", runId: 10, reason: "replaced by run 1" },
      { kind: "start", runId: 1, attemptNo: 1 },
    ]);
  });

  it("allow: starts without looking at the others", () => {
    const w = { project: project("concurrency: allow"), gate: true };
    expect(run(w, row(1, "extract", "PENDING"), ready)).toEqual([{ kind: "start", runId: 1, attemptNo: 1 }]);
  });

  it("a closed dependency gate: nothing, the run waits PENDING (before any concurrency policy)", () => {
    const w = { project: project("concurrency: forbid"), gate: false };
    expect(run(w, row(1, "transform", "PENDING"), ready)).toEqual([]);
  });

  it("a RETRYING run whose delay passed starts its next attempt: no gate, no concurrency policy", () => {
    const w = { project: project("concurrency: forbid") };
    expect(run(w, row(1, "extract", "RETRYING", { attempt: 2 }), ready)).toEqual([{ kind: "start", runId: 1, attemptNo: 3 }]);
  });

  it.each([
    ["PENDING", "SKIPPED"],
    ["RETRYING", "FAILED"],
  ] as const)("in a halted cycle a %s run ends %s (pipeline stopped)", (from, to) => {
    const w = { project: project(""), halted: true };
    expect(run(w, row(1, "extract", from), ready)).toEqual([
      // duration_ms from its start (5 s ago), which the timeline places it by; none for a run that never started.
      { kind: "transition", runId: 1, from, to, patch: { error: "pipeline stopped", finished_at: AT, duration_ms: from === "PENDING" ? null : 5_000 } },
    ]);
  });

  it("a run of a job removed from svc.yaml ends FAILED", () => {
    const w = { project: project("") };
    expect(run(w, row(1, "gone", "PENDING"), ready)).toEqual([
      { kind: "transition", runId: 1, from: "PENDING", to: "FAILED", patch: { error: "job gone is no longer in svc.yaml", finished_at: AT, duration_ms: null } },
    ]);
  });
});

describe("the backfill rows (CONTRACT §7.3: backfill runs wait, never SKIPPED by forbid, never replacing)", () => {
  const ready: Situation = { kind: "ready" };
  const slot = (over: Partial<RunRecord> = {}) => row(1, "extract", "PENDING", { trigger: "backfill", backfill_id: 3, ...over });
  const b = (over: Partial<BackfillFacts> = {}): BackfillFacts => ({ parallel: 1, cancelled: false, active: 0, outside: 0, ...over });

  it.each(["forbid", "replace", "allow"])("concurrency %s, another run of the job active: the slot run waits PENDING", (policy) => {
    const w = { project: project(`concurrency: ${policy}`), gate: true, backfill: b({ outside: 1 }) };
    expect(run(w, slot(), ready)).toEqual([]);
  });

  it("parallel 2 with 2 of its runs active: waits; with 1: starts", () => {
    const w = { project: project("concurrency: forbid"), gate: true, backfill: b({ parallel: 2, active: 2 }) };
    expect(run(w, slot(), ready)).toEqual([]);
    expect(run({ ...w, backfill: b({ parallel: 2, active: 1 }) }, slot(), ready)).toEqual([{ kind: "start", runId: 1, attemptNo: 1 }]);
  });

  it("nothing else active: starts, without the job's concurrency policy", () => {
    const w = { project: project("concurrency: replace"), gate: true, backfill: b() };
    expect(run(w, slot(), ready)).toEqual([{ kind: "start", runId: 1, attemptNo: 1 }]);
  });

  it("a cancelled backfill: the waiting slot run ends SKIPPED (backfill cancelled)", () => {
    const w = { project: project(""), gate: true, backfill: b({ cancelled: true }) };
    expect(run(w, slot(), ready)).toEqual([
      { kind: "transition", runId: 1, from: "PENDING", to: "SKIPPED", patch: { error: "backfill cancelled", finished_at: AT } },
    ]);
  });

  it("the dependency gate comes first", () => {
    const w = { project: project(""), gate: false };
    expect(run(w, slot(), ready)).toEqual([]);
  });

  it("a dependency run in a backfill's cycle waits for its job's other runs (forbid, replace), starts beside them with allow", () => {
    const dep = row(1, "transform", "PENDING", { trigger: "dependency", backfill_id: 3 });
    for (const policy of ["forbid", "replace"]) {
      const yaml = `jobs:\n  extract:\n    command: x\n    frequency: hourly\n  transform:\n    command: y\n    frequency: after:extract\n    concurrency: ${policy}\n`;
      const p = parseProjectText(yaml, "/p/svc.yaml", {});
      if (!p.ok) throw new Error("bad yaml");
      expect(run({ project: p.value, gate: true, others: [{ id: 9, status: "RUNNING" }] }, dep, ready), policy).toEqual([]);
      expect(run({ project: p.value, gate: true, others: [] }, dep, ready), policy).toEqual([{ kind: "start", runId: 1, attemptNo: 1 }]);
    }
    const allow = parseProjectText(`jobs:\n  extract:\n    command: x\n  transform:\n    command: y\n    frequency: after:extract\n    concurrency: allow\n`, "/p/svc.yaml", {});
    if (!allow.ok) throw new Error("bad yaml");
    expect(run({ project: allow.value, gate: true }, dep, ready)).toEqual([{ kind: "start", runId: 1, attemptNo: 1 }]);
  });

  it("a manual run (a retry) that came out of a backfill's cycle follows the job's policy as any manual run", () => {
    const w = { project: project("concurrency: forbid"), gate: true, others: [{ id: 9, status: "RUNNING" as const }] };
    expect(run(w, row(1, "extract", "PENDING", { trigger: "manual", backfill_id: 3 }), ready)).toEqual([
      { kind: "transition", runId: 1, from: "PENDING", to: "SKIPPED", patch: { error: "concurrency forbid", finished_at: AT } },
    ]);
  });
});
