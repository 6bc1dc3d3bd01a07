import type { JobConfig } from "../config/types.js";
import { createOutputCapture, runWithTimeout } from "../executor/index.js";
import type { OutStream, SpawnSpec, TimedProcessHandle } from "../executor/index.js";
import type { Clock } from "../shared/clock.js";
import { iso } from "../shared/clock.js";
import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";
import type { Store } from "../store/api.js";
import type { HcStatus, LogStream, RunRecord } from "../store/types.js";
import { formatDuration } from "../config/index.js";

/** How one attempt of a run ended. The engine turns this into a transition. */
export interface AttemptResult {
  exitCode: number | null;
  /** Main command exited 0 and the healthcheck (if any) passed or only warned. */
  ok: boolean;
  hc: HcStatus | null;
  /** Why it failed (CONTRACT §3 `error`), null on success. */
  error: string | null;
  /** False when a person or policy stopped it (cancel, replace, pipeline stop, shutdown). */
  retryable: boolean;
  /** A person or policy stopped it: it ends FAILED whatever the job's on_failure (CONTRACT §3). */
  stopped?: boolean;
}

export interface AttemptDeps {
  store: Store;
  clock: Clock;
  log: Logger;
  killGraceMs: number;
  shell: string;
}

/**
 * One attempt of a run: the main command, output capture, then the
 * healthcheck (SPEC rules 4, 6, 7). Lines go to the log store as they come.
 * The attempt never changes run status: it reports an AttemptResult.
 */
export class Attempt {
  private stopReason: string | null = null;
  /** Set by discard(): no line or output of this attempt is stored. */
  private discarded = false;
  /** Lines that came before the start was recorded (see recorded()); null once it is. */
  private held: Array<[LogStream, string, string]> | null = [];
  private current: TimedProcessHandle | null = null;
  /** The last log timestamp and its ISO text. */
  private stampMs = Number.NaN;
  private stampIso = "";
  private readonly startedAt: number;
  private readonly main: TimedProcessHandle;
  readonly done: Promise<AttemptResult>;

  constructor(
    private readonly deps: AttemptDeps,
    readonly run: RunRecord,
    readonly job: JobConfig,
    spec: SpawnSpec,
  ) {
    this.startedAt = deps.clock.now();
    const capture = createOutputCapture(job.output);
    const main = this.spawn(spec, job.timeoutMs, (stream, line) => {
      this.append(stream, line);
      if (stream === "stdout") capture.feed(line);
    });
    this.main = main;
    this.done = this.finish(main, spec, capture).catch((e: unknown) => {
      const err = toError(e);
      deps.log.error({ err, run_id: run.id, job: job.name }, "attempt failed unexpectedly");
      return { exitCode: null, ok: false, hc: null, error: `internal error: ${err.message}`, retryable: false };
    });
  }

  /** Pid of the main command's group leader; null when it could not start. */
  get pid(): number | null {
    return this.main.pid;
  }

  /** Null once the main command's start is settled; else resolves when it is (see ProcessHandle.spawning). */
  get spawning(): Promise<void> | null {
    return this.main.spawning;
  }

  /** Its /proc start time (see ProcessHandle.pidStart). */
  get pidStart(): string | null {
    return this.main.pidStart;
  }

  /** Stops the attempt for good (no retry): SIGTERM, then SIGKILL after the grace. */
  stop(reason: string): void {
    this.stopReason ??= reason;
    this.current?.stop();
  }

  /**
   * SIGKILL now, and nothing of this attempt is written any more: its start was never recorded
   * (the database refused it), so its lines and outputs belong to no run. A rolled-back run's id
   * is taken again by the next new run, which must not inherit them.
   */
  discard(reason: string): void {
    this.discarded = true;
    this.kill(reason);
  }

  /** SIGKILL now (forced daemon stop, shutdown timeout). */
  kill(reason: string): void {
    this.stopReason ??= reason;
    this.current?.kill();
  }

  private spawn(spec: SpawnSpec, timeoutMs: number | null, onLine: (s: OutStream, l: string) => void) {
    const handle = runWithTimeout(spec, { killGraceMs: this.deps.killGraceMs, timeoutMs, onLine, logger: this.deps.log });
    this.current = handle;
    // A stop that raced the spawn still applies to the new process.
    if (this.stopReason !== null) handle.stop();
    return handle;
  }

  /**
   * The start is recorded (RUNNING): its `marker` line goes first, at `at`, then the lines that came
   * before (held until now, each with its own time), and from now on every line as it comes.
   */
  recorded(marker: string, at: string): void {
    const held = this.held;
    this.held = null;
    if (this.discarded) return;
    this.deps.store.logs.append(this.run.id, "stdout", marker, at);
    for (const [stream, line, ts] of held ?? []) this.deps.store.logs.append(this.run.id, stream, line, ts);
  }

  private append(stream: LogStream, line: string): void {
    if (this.discarded) return;
    // A fast writer sends many lines per millisecond: format each millisecond's timestamp once.
    const now = this.deps.clock.now();
    if (now !== this.stampMs) {
      this.stampMs = now;
      this.stampIso = iso(now);
    }
    if (this.held !== null) this.held.push([stream, line, this.stampIso]);
    else this.deps.store.logs.append(this.run.id, stream, line, this.stampIso);
  }

  private async finish(
    main: TimedProcessHandle,
    spec: SpawnSpec,
    capture: ReturnType<typeof createOutputCapture>,
  ): Promise<AttemptResult> {
    const exit = await main.exited;
    if (exit.spawnError !== null) {
      this.append("stderr", `svc: ${exit.spawnError}`);
      return { exitCode: null, ok: false, hc: null, error: exit.spawnError, retryable: this.stopReason === null, stopped: this.stopReason !== null };
    }
    // Outputs are captured after every attempt whose command exited, before the healthcheck (CONTRACT §3).
    this.storeOutputs(capture.finish(exit.code));
    const failed = (error: string, retryable = true): AttemptResult => ({
      exitCode: exit.code,
      ok: false,
      hc: null,
      error,
      retryable,
    });
    if (this.stopReason !== null) return { ...failed(this.stopReason, false), stopped: true };
    if (exit.watchError) {
      this.append("stderr", `svc: ${exit.watchError}`);
      return failed(exit.watchError);
    }
    if (exit.timedOut) return failed(`timeout after ${formatDuration(this.job.timeoutMs ?? 0)}`);
    if (exit.code !== 0) return failed(exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`);
    if (!this.job.healthcheck) return { exitCode: 0, ok: true, hc: null, error: null, retryable: true };
    return this.healthcheck(spec);
  }

  private async healthcheck(spec: SpawnSpec): Promise<AttemptResult> {
    const hc = this.job.healthcheck!;
    const handle = this.spawn({ ...spec, command: hc.command }, hc.timeoutMs, (_s, line) => this.append("healthcheck", line));
    const exit = await handle.exited;
    if (this.stopReason !== null) {
      return { exitCode: 0, ok: false, hc: null, error: this.stopReason, retryable: false, stopped: true };
    }
    if (exit.spawnError === null && exit.code === 0 && !exit.timedOut) {
      return { exitCode: 0, ok: true, hc: "pass", error: null, retryable: true };
    }
    const why = exit.spawnError
      ? `healthcheck: ${exit.spawnError}`
      : exit.timedOut
        ? `healthcheck timeout after ${formatDuration(hc.timeoutMs)}`
        : exit.signal
          ? `healthcheck killed by ${exit.signal}`
          : `healthcheck failed (exit code ${exit.code})`;
    this.append("healthcheck", `svc: ${why}`);
    if (hc.onFail === "warn_only") return { exitCode: 0, ok: true, hc: "warn", error: why, retryable: true };
    return { exitCode: 0, ok: false, hc: "fail", error: why, retryable: true };
  }

  private storeOutputs(values: Record<string, string>): void {
    if (this.discarded) return;
    const at = iso(this.deps.clock.now());
    for (const [var_name, value] of Object.entries(values)) {
      this.deps.store.outputs.put({
        run_id: this.run.id,
        job_name: this.job.name,
        var_name,
        value,
        cycle_id: this.run.cycle_id,
        created_at: at,
      });
    }
  }

  /** Milliseconds since this attempt started. */
  elapsed(): number {
    return this.deps.clock.now() - this.startedAt;
  }
}
