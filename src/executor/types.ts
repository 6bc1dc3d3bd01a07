/**
 * The executor's contract with the engine: start one subprocess in its own
 * process group, stream its lines, stop the whole group on demand.
 */
import type { Logger } from "../shared/logger.js";

export interface SpawnSpec {
  /** String: run through `shell -c`. Array: executed directly (argv). */
  command: string | string[];
  shell: string; // executor.shell, default /bin/sh
  cwd: string;
  env: Record<string, string>;
}

export interface ExitInfo {
  /** Exit code, or null when a signal ended the process or it never started. */
  code: number | null;
  /** Signal name (SIGTERM, SIGKILL...) when a signal ended it. */
  signal: string | null;
  /** Set when the process could not be started (ENOENT, EACCES...): a one-line reason. */
  spawnError: string | null;
  /**
   * Set when svcd could not watch the running process any more (posix_spawn's
   * pidfd poll failed) and killed it instead: a one-line reason. The run fails with it.
   * Absent otherwise.
   */
  watchError?: string;
}

export type OutStream = "stdout" | "stderr";

export interface ProcessHandle {
  /** Pid of the group leader (= the process group id). Null when spawn failed, or while `spawning`. */
  readonly pid: number | null;
  /**
   * Null once the start is settled: `pid` is the process's, or null when it could not start. While the
   * kernel is still starting it off the event loop (posix_spawn on a worker thread), a promise that
   * resolves when it is settled, in the turn whose end is before any line or the exit of the process
   * can be read.
   */
  readonly spawning: Promise<void> | null;
  /**
   * Start time of the process from /proc/<pid>/stat field 22 (clock ticks
   * since boot), read right after spawn; guards against pid reuse. Null when
   * spawn failed or /proc is unavailable.
   */
  readonly pidStart: string | null;
  /**
   * Resolves once the leader has exited and both pipes are drained (every
   * line delivered). Never rejects. By then nothing of the group is left
   * running: leftovers get SIGKILL after the drain window (control-group semantics).
   */
  readonly exited: Promise<ExitInfo>;
  /** SIGTERM to the group, SIGKILL to the group after `killGraceMs` if still alive. Idempotent; no-op after the end. */
  stop(): void;
  /** SIGKILL to the group now. */
  kill(): void;
}

export interface StartOptions {
  killGraceMs: number;
  /** Lines longer than this many bytes are split (default 64 KiB). */
  maxLineBytes?: number;
  /**
   * Called for every complete line (and the final partial line at exit), in
   * order per stream. Lines carry no `\n` and no trailing `\r`; invalid UTF-8
   * and NUL bytes arrive as U+FFFD. Must not throw: a throw is logged through
   * `logger` (the line is dropped, capture goes on), or rethrown
   * asynchronously (an uncaught exception) when there is no logger.
   */
  onLine: (stream: OutStream, line: string) => void;
  /**
   * After the leader exits, how long leftover processes of its group may keep
   * the pipes open before the rest of the group is killed (default 200 ms).
   */
  drainMs?: number;
  /** Where a throwing onLine, pipe errors and other unexpected errors are reported. */
  logger?: Logger;
}

export interface TimedStartOptions extends StartOptions {
  /** Stop (SIGTERM, SIGKILL after killGraceMs) once this many ms have passed. Null: no timeout. */
  timeoutMs: number | null;
}

export interface TimedExitInfo extends ExitInfo {
  /** True when the timeout fired and stopped the process (not when stop() came first). */
  timedOut: boolean;
}

export interface TimedProcessHandle extends ProcessHandle {
  readonly exited: Promise<TimedExitInfo>;
}

/** Collects `output:` values from a run's stdout lines (CONTRACT §3). */
export interface OutputCapture {
  /** Feed one stdout line (as delivered by onLine). */
  feed(line: string): void;
  /** The captured variables; a variable with no match is absent. */
  finish(exitCode: number | null): Record<string, string>;
}
