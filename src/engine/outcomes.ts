import type { JobConfig } from "../config/types.js";
import type { JobStateRow, LogStream, NewNonRun, NewRun, RunPatch, RunRecord, RunStatus } from "../store/types.js";
import type { AttemptResult } from "./attempt.js";
import { defaultParams, secretParamNames } from "../config/params.js";
import { retryDelayMs } from "./retryDelay.js";

/**
 * The engine's decisions, pure: what follows when an attempt ends, a dispatch
 * fails, a run is found lost at startup, a waiting run may start, or a run
 * waiting to retry is stopped for good (SPEC's
 * transition table from RUNNING on, retries, failure policies, concurrency
 * policies and dependency triggering, CONTRACT §3).
 *
 * `decide(situation, facts, now, random) -> Effect[]` reads only its inputs:
 * no database, no clock, no process. The dispatcher gathers the facts and
 * applies the effects in one transaction (apply.ts), announcing them after the
 * commit. Each row of the policy tables is a table test (outcomes.test.ts).
 */

/** What happened to `facts.run` that needs a decision. */
export type Situation =
  /** An attempt of the RUNNING run ended. */
  | { kind: "ended"; result: AttemptResult; finishedAt: number }
  /** The PENDING or RETRYING run could not be dispatched (a missing output value, an unset variable): never retried. */
  | { kind: "dispatchFailed"; attemptNo: number; error: string }
  /** A RUNNING run left by a previous daemon: its process is gone (CONTRACT §3 crash recovery). */
  | { kind: "lost" }
  /** A waiting (PENDING or RETRYING) run reached the head of the queue with a pool slot free. */
  | { kind: "ready" }
  /** A RETRYING run, waiting out its retry delay, was stopped for good (cancel, replace, pipeline stop): no process to stop. */
  | { kind: "stopped"; reason: string };

export type NotifyEvent = "on_success" | "on_failure" | "on_sla_breach" | "on_retry";

export type Effect =
  /** A checked status change of a run that is `from` as stored. */
  | { kind: "transition"; runId: number; from: RunStatus; to: RunStatus; patch: RunPatch }
  /** A new run row (a dependency-triggered PENDING run, or a SKIPPED row of a skipped descendant). */
  | { kind: "create"; run: Omit<NewRun, "created_at"> }
  | { kind: "jobState"; job: string; patch: Partial<Omit<JobStateRow, "job_name">> }
  /** A line in the run's log (the reason a dispatch failed). */
  | { kind: "logLine"; runId: number; stream: LogStream; line: string }
  /** Stop an active run for good: SIGTERM its attempt (its end is recorded when it exits), or end it FAILED if it waits to retry. */
  | { kind: "stop"; runId: number; reason: string }
  /** Start the ready run's attempt number `attemptNo`. */
  | { kind: "start"; runId: number; attemptNo: number }
  | { kind: "notify"; event: NotifyEvent; runId: number; previousStatus: RunStatus | null }
  /** Nothing new dispatches in the cycle any more (`on_failure: stop`). */
  | { kind: "halt"; cycleId: string }
  /** Look at the queue again at `at` (a retry instant), not only at the next whole-second tick. */
  | { kind: "wake"; at: number }
  | { kind: "log"; level: "info" | "warn"; fields: Record<string, unknown>; message: string }
  /** A trace of a run that will not happen (non_runs, `svc why`): a log line is gone with the log. */
  | { kind: "nonRun"; entry: Omit<NewNonRun, "at"> };

/**
 * What decide may know. The lists a decision needs only sometimes are read on
 * first use (most ends need no cycle: a job without downstream jobs).
 */
export interface Facts {
  /** The run as stored now. */
  run: RunRecord;
  /** Its job in the current config; undefined when svc.yaml no longer has it. */
  job: JobConfig | undefined;
  cycle: {
    /** Halted by an `on_failure: stop` job. */
    halted: boolean;
    /** Every run of the cycle as stored now. */
    runs(): readonly RunRecord[];
  };
  downstreams: {
    /** The jobs that list `job` upstream, in file order. */
    of(job: string): readonly string[];
    job(name: string): JobConfig | undefined;
    paused(name: string): boolean;
  };
  /** Status of the job's most recent finished run (for `only_after_failure`; asked only when the job has such an entry). */
  previousStatus(): RunStatus | null;
  /** The job's other RUNNING or RETRYING runs (for the concurrency policy). */
  othersActive(): readonly { id: number; status: RunStatus; pid: number | null }[];
  /** CONTRACT §3's dependency gate of a PENDING run (checked after the halted cycle, before concurrency). */
  gateOpen(): boolean;
  /**
   * The backfill a slot run (trigger `backfill`) belongs to (CONTRACT §7.3): its `parallel`,
   * whether it was cancelled, how many of its runs of the job are RUNNING or RETRYING
   * (`active`, this one not counted) and how many other runs of the job are (`outside`).
   * Null when it is not known (the run then starts as any run would).
   */
  backfill(): BackfillFacts | null;
}

export interface BackfillFacts {
  parallel: number;
  cancelled: boolean;
  active: number;
  outside: number;
}

export function decide(situation: Situation, facts: Facts, now: number, random: () => number): Effect[] {
  const d = new Decision(facts, now, random);
  switch (situation.kind) {
    case "ended":
      d.ended(situation.result, situation.finishedAt);
      break;
    case "dispatchFailed":
      d.dispatchFailed(situation.attemptNo, situation.error);
      break;
    case "lost":
      d.lost();
      break;
    case "ready":
      d.ready();
      break;
    case "stopped":
      d.stopped(situation.reason);
      break;
  }
  return d.effects;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** One decision: its facts, and the effects in the order they apply. */
class Decision {
  readonly effects: Effect[] = [];
  private readonly at: string;

  constructor(
    private readonly facts: Facts,
    private readonly now: number,
    private readonly random: () => number,
  ) {
    this.at = iso(now);
  }

  private push(e: Effect): void {
    this.effects.push(e);
  }

  /**
   * The end of a run that did not end by its attempt's exit (lost, stopped while waiting to retry, its job
   * removed, its cycle halted): `finished_at` now and `duration_ms` from its start, which the timeline places
   * it by; `whenNeverStarted` for one that never started.
   */
  private closing(run: RunRecord, whenNeverStarted: number | null = null): Pick<RunPatch, "finished_at" | "duration_ms"> {
    return { finished_at: this.at, duration_ms: run.started_at === null ? whenNeverStarted : Math.max(0, this.now - Date.parse(run.started_at)) };
  }

  /** A transition of `run`; returns the run as it will be stored, for what follows. */
  private transition(run: RunRecord, to: RunStatus, patch: RunPatch = {}): RunRecord {
    this.push({ kind: "transition", runId: run.id, from: run.status, to, patch });
    return { ...run, ...patch, status: to };
  }

  ended(result: AttemptResult, finishedAt: number): void {
    const { run } = this.facts;
    const job = this.facts.job!;
    const finished = iso(finishedAt);
    const patch: RunPatch = {
      exit_code: result.exitCode,
      hc_status: result.hc,
      finished_at: finished,
      // Wall-clock difference: a clock stepped back during the run must not make it negative.
      duration_ms: Math.max(0, finishedAt - Date.parse(run.started_at ?? finished)),
      pid: null,
    };
    // SPEC rule 8 at the run's end: the tick checks SLAs once a second, and a run may pass its SLA and end
    // between two ticks (sla: 100ms, a run of 0.6 s). Marked here, reported before what the end reports.
    const breached = job.slaMs !== null && run.sla_breached !== 1 && patch.duration_ms! >= job.slaMs;
    if (breached) patch.sla_breached = 1;
    // The job's lock is released in the same write as its last_success / last_failure, or passed to
    // another of its runs still running (concurrency allow, a replaced run slow to go).
    const lock = job.concurrency === "forbid" ? null : (this.facts.othersActive().find((o) => o.status === "RUNNING" && o.pid !== null)?.pid ?? null);
    if (result.ok) {
      // Only an `only_after_failure` entry reads the previous status: other jobs skip the query.
      const previous = (job.notify.on_success ?? []).some((e) => e.onlyAfterFailure) ? this.facts.previousStatus() : null;
      const done = this.transition(run, "SUCCESS", { ...patch, error: result.hc === "warn" ? result.error : null });
      if (breached) this.push({ kind: "notify", event: "on_sla_breach", runId: run.id, previousStatus: null });
      this.push({ kind: "jobState", job: job.name, patch: { lock_pid: lock, last_success: finished } });
      this.push({ kind: "notify", event: "on_success", runId: run.id, previousStatus: previous });
      // A healthcheck that fails with warn_only fires the on_sla_breach event (SPEC).
      if (result.hc === "warn") this.push({ kind: "notify", event: "on_sla_breach", runId: run.id, previousStatus: null });
      this.triggerDownstream(done);
      return;
    }
    const failed = this.transition(run, "FAILED", { ...patch, error: result.error });
    if (breached) this.push({ kind: "notify", event: "on_sla_breach", runId: run.id, previousStatus: null });
    this.push({ kind: "jobState", job: job.name, patch: { last_failure: finished, lock_pid: lock } });
    this.afterFailure(failed, job, result.retryable, result.stopped === true);
  }

  dispatchFailed(attemptNo: number, error: string): void {
    const { run } = this.facts;
    const job = this.facts.job!;
    const failed = this.transition(run, "FAILED", { attempt: attemptNo, error, ...this.closing(run, 0) });
    this.push({ kind: "logLine", runId: run.id, stream: "stderr", line: `svc: ${error}` });
    this.push({ kind: "jobState", job: job.name, patch: { last_failure: this.at } });
    // A dispatch error is not retried: a missing value or variable will not appear by waiting.
    this.afterFailure(failed, job, false);
  }

  lost(): void {
    const { run, job } = this.facts;
    const failed = this.transition(run, "FAILED", { error: "daemon restarted, process lost", ...this.closing(run), pid: null });
    this.push({ kind: "jobState", job: run.job_name, patch: { last_failure: this.at } });
    if (job) this.afterFailure(failed, job, true);
  }

  /** As a RUNNING run stopped for the same reason ends (its attempt ended `stopped`), without the attempt's fields. */
  stopped(reason: string): void {
    const { run, job } = this.facts;
    const failed = this.transition(run, "FAILED", { error: reason, ...this.closing(run), next_attempt_at: null });
    this.push({ kind: "jobState", job: run.job_name, patch: { last_failure: this.at } });
    if (job) this.afterFailure(failed, job, false, true);
  }

  /** CONTRACT §3: a removed job, a halted cycle, the gate, then the concurrency policy of a new run. */
  ready(): void {
    const { run, job } = this.facts;
    if (!job) {
      this.transition(run, "FAILED", { error: `job ${run.job_name} is no longer in svc.yaml`, ...this.closing(run) });
      return;
    }
    if (this.facts.cycle.halted) {
      this.transition(run, run.status === "PENDING" ? "SKIPPED" : "FAILED", { error: "pipeline stopped", ...this.closing(run) });
      return;
    }
    if (run.status === "RETRYING") {
      this.push({ kind: "start", runId: run.id, attemptNo: run.attempt + 1 });
      return;
    }
    if (!this.facts.gateOpen()) return; // waits in PENDING
    if (run.backfill_id !== null && run.trigger !== "manual") {
      this.readyInBackfill(run, job);
      return;
    }
    const others = job.concurrency === "allow" ? [] : this.facts.othersActive();
    if (others.length > 0 && job.concurrency === "forbid") {
      this.transition(run, "SKIPPED", { error: "concurrency forbid", finished_at: this.at });
      return;
    }
    if (job.concurrency === "replace") {
      for (const other of others) this.push({ kind: "stop", runId: other.id, reason: `replaced by run ${run.id}` });
    }
    this.push({ kind: "start", runId: run.id, attemptNo: run.attempt });
  }

  /**
   * CONTRACT §7.3: a backfill's runs wait, they are never SKIPPED by `forbid` nor `replace`
   * anything. A slot run starts only while no other run of its job is RUNNING or RETRYING and
   * fewer than `parallel` of its backfill's are (whatever the job's concurrency policy); a
   * dependency-triggered run in a backfill's cycle waits for its job's other runs unless the job
   * allows overlap. A slot run of a cancelled backfill ends SKIPPED.
   */
  private readyInBackfill(run: RunRecord, job: JobConfig): void {
    if (run.trigger === "backfill") {
      const b = this.facts.backfill();
      if (b?.cancelled) {
        this.transition(run, "SKIPPED", { error: "backfill cancelled", finished_at: this.at });
        return;
      }
      if (b && (b.outside > 0 || b.active >= b.parallel)) return; // waits in PENDING
    } else if (job.concurrency !== "allow" && this.facts.othersActive().length > 0) {
      return; // waits in PENDING
    }
    this.push({ kind: "start", runId: run.id, attemptNo: run.attempt });
  }

  /**
   * A FAILED attempt: retry while attempts remain (when `retryable`), else the job's failure policy. A run a
   * person or policy stopped (cancel, replace, pipeline stop) ends FAILED (CONTRACT §3): on_failure's `skip`
   * (SKIPPED, and its dependents) and `stop` (the cycle halted) are not for it; `alert` still tells.
   */
  private afterFailure(run: RunRecord, job: JobConfig, retryable: boolean, stopped = false): void {
    if (retryable && run.attempt < 1 + job.retries) {
      const at = this.now + retryDelayMs(job.retryDelay, run.attempt, this.random);
      this.transition(run, "RETRYING", { next_attempt_at: iso(at) });
      // Wake exactly at the retry instant rather than at the next whole-second tick.
      this.push({ kind: "wake", at });
      this.push({ kind: "notify", event: "on_retry", runId: run.id, previousStatus: null });
      return;
    }
    // Its dependency-triggered jobs will not run in this cycle (on_failure: skip records SKIPPED rows instead).
    if (job.onFailure !== "skip" || stopped) this.notTriggered(run);
    if (stopped && job.onFailure !== "alert") return;
    switch (job.onFailure) {
      case "alert":
        this.push({ kind: "notify", event: "on_failure", runId: run.id, previousStatus: null });
        return;
      case "skip":
        this.skipDescendants(this.transition(run, "SKIPPED"));
        return;
      case "stop":
        this.haltCycle(run);
        return;
      case "ignore":
        this.push({ kind: "log", level: "info", fields: { job: job.name, run_id: run.id, error: run.error }, message: "run failed (on_failure: ignore)" });
        return;
    }
  }

  /**
   * A run of U ended FAILED for good in cycle C: each dependency-triggered job
   * downstream of U that has no run in C leaves a trace that it will not run
   * there (`upstream_failed`), for `svc why`. Its own downstream jobs are
   * explained through it.
   */
  private notTriggered(run: RunRecord): void {
    const downs = this.facts.downstreams.of(run.job_name);
    if (downs.length === 0) return;
    const inCycle = this.facts.cycle.runs();
    for (const name of downs) {
      if (!this.facts.downstreams.job(name)?.dependencyTriggered) continue;
      if (inCycle.some((r) => r.job_name === name && r.status !== "FAILED" && r.status !== "SKIPPED")) continue;
      this.push({
        kind: "nonRun",
        entry: {
          job_name: name,
          reason: "upstream_failed",
          detail: `upstream ${run.job_name} FAILED (run ${run.id}${run.error ? `: ${run.error}` : ""})`,
          cycle_id: run.cycle_id,
          upstream: run.job_name,
          upstream_run_id: run.id,
        },
      });
    }
  }

  /**
   * When a run of U ends SUCCESS in cycle C, each dependency-triggered job D
   * downstream of U gets one PENDING run in C (CONTRACT §3). An existing live
   * or successful run of D in C is reused (its gate is checked again); a
   * FAILED or SKIPPED one is not, so a manual retry of U can still lead on.
   */
  private triggerDownstream(run: RunRecord): void {
    const { cycle, downstreams } = this.facts;
    if (cycle.halted) return;
    const downs = downstreams.of(run.job_name);
    if (downs.length === 0) return;
    const inCycle = cycle.runs();
    for (const name of downs) {
      const job = downstreams.job(name);
      if (!job || !job.dependencyTriggered) continue;
      if (downstreams.paused(name)) {
        this.push({ kind: "log", level: "info", fields: { job: name, upstream: run.job_name, cycle_id: run.cycle_id }, message: "job is paused: not triggered" });
        this.push({
          kind: "nonRun",
          entry: {
            job_name: name,
            reason: "paused",
            detail: `paused: not triggered when ${run.job_name} succeeded (run ${run.id})`,
            cycle_id: run.cycle_id,
            upstream: run.job_name,
            upstream_run_id: run.id,
          },
        });
        continue;
      }
      const live = inCycle.some((r) => r.job_name === name && r.status !== "FAILED" && r.status !== "SKIPPED");
      if (live) continue;
      // An upstream skipped in this cycle (on_failure: skip) keeps the job's gate shut for good: a run
      // made now would wait PENDING forever. Its SKIPPED row, if any, says why. A retried upstream that
      // succeeds since is the latest run of its job, and opens the way again.
      if (job.upstreams.some((u) => latestOf(inCycle, u)?.status === "SKIPPED")) continue;
      this.push({
        kind: "create",
        run: { job_name: name, trigger: "dependency", triggered_by: run.job_name, cycle_id: run.cycle_id, tags: job.tags, ...fromCycle(run, job) },
      });
    }
  }

  /**
   * `on_failure: skip`: each dependency-triggered job downstream (transitively)
   * that would have run in the cycle gets a SKIPPED row there
   * (`error: upstream skipped: <job>`); an existing PENDING run is skipped instead;
   * a job that already ran in the cycle through another path is left alone, with what follows it.
   */
  private skipDescendants(run: RunRecord): void {
    const { cycle, downstreams } = this.facts;
    const inCycle = cycle.runs();
    const queue: [string, string][] = downstreams.of(run.job_name).map((d) => [d, run.job_name]);
    const seen = new Set<string>();
    while (queue.length > 0) {
      const [name, upstream] = queue.shift()!;
      if (seen.has(name)) continue;
      seen.add(name);
      const job = downstreams.job(name);
      if (!job || !job.dependencyTriggered) continue;
      const error = `upstream skipped: ${upstream}`;
      const existing = inCycle.filter((r) => r.job_name === name);
      const pending = existing.find((r) => r.status === "PENDING");
      if (pending) {
        this.transition(pending, "SKIPPED", { error, finished_at: this.at });
      } else if (existing.length === 0) {
        this.push({
          kind: "create",
          run: {
            job_name: name,
            trigger: "dependency",
            triggered_by: upstream,
            cycle_id: run.cycle_id,
            status: "SKIPPED",
            error,
            tags: job.tags,
            ...fromCycle(run, job),
          },
        });
      } else {
        continue;
      }
      for (const d of downstreams.of(name)) queue.push([d, name]);
    }
  }

  /**
   * `on_failure: stop`: the cycle halts. PENDING runs in it become SKIPPED,
   * RUNNING and RETRYING runs downstream of the failed job are stopped
   * (`error: pipeline stopped`), and nothing new dispatches in the cycle.
   */
  private haltCycle(run: RunRecord): void {
    this.push({ kind: "halt", cycleId: run.cycle_id });
    const downstream = this.descendants(run.job_name);
    for (const r of this.facts.cycle.runs()) {
      if (r.id === run.id) continue;
      if (r.status === "PENDING") {
        this.transition(r, "SKIPPED", { error: "pipeline stopped", finished_at: this.at });
      } else if ((r.status === "RUNNING" || r.status === "RETRYING") && downstream.has(r.job_name)) {
        this.push({ kind: "stop", runId: r.id, reason: "pipeline stopped" });
      }
    }
    this.push({ kind: "log", level: "warn", fields: { job: run.job_name, run_id: run.id, cycle_id: run.cycle_id }, message: "pipeline stopped (on_failure: stop)" });
  }

  private descendants(job: string): Set<string> {
    const out = new Set<string>();
    const queue = [...this.facts.downstreams.of(job)];
    while (queue.length > 0) {
      const name = queue.pop()!;
      if (out.has(name)) continue;
      out.add(name);
      queue.push(...this.facts.downstreams.of(name));
    }
    return out;
  }
}

/**
 * What a run created in `run`'s cycle takes from it and from its own job: the cycle's slot
 * and backfill (CONTRACT §7.3) and the job's param defaults (§7.2).
 */
function fromCycle(run: RunRecord, job: JobConfig): Pick<NewRun, "scheduled_at" | "backfill_id" | "params" | "secretParams"> {
  return { scheduled_at: run.scheduled_at, backfill_id: run.backfill_id, params: defaultParams(job.params), secretParams: secretParamNames(job.params) };
}

/** The job's newest run among `runs`. */
function latestOf(runs: readonly RunRecord[], job: string): RunRecord | undefined {
  let latest: RunRecord | undefined;
  for (const r of runs) if (r.job_name === job && (latest === undefined || r.id > latest.id)) latest = r;
  return latest;
}
