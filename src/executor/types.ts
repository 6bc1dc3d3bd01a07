/**
 * The executor's contract with the engine: start one subprocess in its own
 * process group, stream its lines, stop the whole group on demand.
 */

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
}

export type OutStream = "stdout" | "stderr";

export interface ProcessHandle {
  /** Pid of the group leader (= the process group id). Null when spawn failed. */
  readonly pid: number | null;
  /** Start time of the process from /proc/<pid>/stat (clock ticks), guards against pid reuse. */
  readonly pidStart: string | null;
  /** Resolves once the process has exited and both pipes are drained (every line delivered). */
  readonly exited: Promise<ExitInfo>;
  /** SIGTERM to the group, SIGKILL to the group after `killGraceMs` if still alive. Idempotent. */
  stop(): void;
  /** SIGKILL to the group now. */
  kill(): void;
}

export interface StartOptions {
  killGraceMs: number;
  /** Lines longer than this many bytes are split (default 64 KiB). */
  maxLineBytes?: number;
  /** Called for every complete line (and the final partial line at exit), in order per stream. */
  onLine: (stream: OutStream, line: string) => void;
}
