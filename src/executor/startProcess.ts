/**
 * One subprocess in its own process group, with its stdout and stderr split
 * into lines in real time.
 *
 * Lifetime (invariant: `exited` resolves once, after the last onLine call):
 * 1. spawn with `detached: true`: the child is the leader of a new group
 *    whose id is its pid. stdin is /dev/null.
 * 2. The run ends when the leader has exited AND both pipes have ended. A job
 *    that closes its stdout and keeps running is still tracked until it exits.
 * 3. When the leader has exited, its group is not left behind (like systemd's
 *    KillMode=control-group): leftover processes may keep the pipes open for
 *    `drainMs` (200 ms) to finish writing; then anything still alive in the
 *    group gets SIGKILL. Processes that left the group (setsid) are out of
 *    reach; if they still hold a pipe after a further bound, the pipe is
 *    closed on our side and `exited` resolves anyway.
 * 4. stop(): SIGTERM (+SIGCONT) to the group, SIGKILL to the group after
 *    `killGraceMs` if the run has not ended. kill(): SIGKILL now.
 * 5. While the leader runs, a large chunk is split into lines a slice at a
 *    time (SLICE_MS of work per event-loop turn), with the pipe paused in
 *    between: a job printing as fast as it can then neither holds the event
 *    loop (the API, the tick) nor grows memory, the writer blocks instead.
 *    Once the leader has exited, what is left is split at once, as before,
 *    so the drain window above sees every byte already read.
 */
import { spawn } from "node:child_process";
import type { EventEmitter } from "node:events";
import { existsSync } from "node:fs";
import { toError } from "../shared/toError.js";
import { createLineSplitter, DEFAULT_MAX_LINE_BYTES } from "./lineSplitter.js";
import { isGroupAlive, processStartTime, signalGroup, terminateGroup } from "./liveness.js";
import { posixSpawn, posixSpawnAsync, type PipeReader, type SpawnedChild } from "./posixSpawn.js";
import type { ExitInfo, OutStream, ProcessHandle, SpawnSpec, StartOptions } from "./types.js";

export const DEFAULT_DRAIN_MS = 200;
/** After the drain window's SIGKILL, how long to wait for pipes held by escaped processes. */
const ESCAPED_PIPE_WAIT_MS = 1_000;
/** Bytes handed to the line splitter at once while slicing a large chunk. */
const SLICE_BYTES = 4_096;
/** Work per event-loop turn on one pipe's output before yielding (why: docs/PERFORMANCE.md, Fixes, "API stalls while a job floods its output"). */
const SLICE_MS = 4;

export function startProcess(spec: SpawnSpec, opts: StartOptions): ProcessHandle {
  const argv = toArgv(spec);
  if (typeof argv === "string") return failedHandle(argv);
  const [file, ...args] = argv;
  let child: Child;
  try {
    // posix_spawn where it is available (Linux): no copy of svcd's memory per job, and the kernel's
    // part of the start off the event loop (posixSpawn.ts).
    const pending = pendingHandle(spec, opts);
    const queued = posixSpawnAsync(file!, args, { cwd: spec.cwd, env: spec.env }, pending.settle);
    if (queued instanceof Error) return failedHandle(spawnErrorReason(spec, queued));
    if (queued) return pending.handle;
    const spawned = posixSpawn(file!, args, { cwd: spec.cwd, env: spec.env });
    if (spawned instanceof Error) return failedHandle(spawnErrorReason(spec, spawned));
    child = spawned ?? spawn(file!, args, { cwd: spec.cwd, env: spec.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  } catch (e: unknown) {
    // Synchronous failures: invalid arguments (a NUL byte in argv, a bad cwd type).
    return failedHandle(`cannot start ${describe(spec)}: ${withoutValue(toError(e))}`);
  }
  if (child.pid === undefined) {
    // Asynchronous failure (ENOENT, EACCES...): 'error' follows on the next tick.
    return failedHandle(
      new Promise((resolve) => {
        child.once("error", (e) => resolve(spawnErrorReason(spec, e)));
      }),
    );
  }
  return track(child, child.pid, opts);
}

/**
 * The handle of a process posixSpawnAsync is starting: no pid yet, `spawning` resolves once it has one
 * (or the start failed, and `exited` says why). A stop() or kill() asked for meanwhile applies to the
 * process as soon as it exists.
 */
function pendingHandle(spec: SpawnSpec, opts: StartOptions): { handle: ProcessHandle; settle: (child: SpawnedChild | NodeJS.ErrnoException) => void } {
  const handle = new PendingProcess();
  const settle = (child: SpawnedChild | NodeJS.ErrnoException): void => {
    handle.settle(child instanceof Error ? failedHandle(spawnErrorReason(spec, child)) : track(child, child.pid, opts));
  };
  return { handle, settle };
}

/*
 * The handles are classes, their getters on the prototype, and never object literals with getters:
 * V8 allocates a literal's getter pair in the old generation, and the young getter closures it holds
 * (with everything their context holds: the pipes, the line splitters, the exit promise) then survive
 * every scavenge until a full collection. Every run's process objects were promoted that way, ~5 KB a
 * run (docs/perf/FIXES.md, "Every run's objects outlived the young generation").
 */

/** pendingHandle's: the process once it exists (`inner`), and a stop or kill asked for before. */
class PendingProcess implements ProcessHandle {
  private inner: ProcessHandle | null = null;
  private asked: "stop" | "kill" | null = null;
  private resolveExited!: (info: ExitInfo) => void;
  readonly exited = new Promise<ExitInfo>((r) => (this.resolveExited = r));
  private resolveSpawning!: () => void;
  private readonly started = new Promise<void>((r) => (this.resolveSpawning = r));

  get pid(): number | null {
    return this.inner?.pid ?? null;
  }
  get pidStart(): string | null {
    return this.inner?.pidStart ?? null;
  }
  get spawning(): Promise<void> | null {
    return this.inner === null ? this.started : null;
  }
  stop(): void {
    if (this.inner) this.inner.stop();
    else this.asked ??= "stop";
  }
  kill(): void {
    if (this.inner) this.inner.kill();
    else this.asked = "kill";
  }
  settle(inner: ProcessHandle): void {
    this.inner = inner;
    void inner.exited.then(this.resolveExited);
    if (this.asked === "kill") inner.kill();
    else if (this.asked === "stop") inner.stop();
    this.resolveSpawning();
  }
}

/** track's: a started process, its start time read on first use. */
class TrackedProcess implements ProcessHandle {
  readonly spawning = null;
  constructor(
    readonly pid: number,
    private readonly readStart: () => string | null,
    readonly exited: Promise<ExitInfo>,
    readonly stop: () => void,
    readonly kill: () => void,
  ) {}
  get pidStart(): string | null {
    return this.readStart();
  }
}

/** The argv to spawn, or a reason why there is none. */
function toArgv(spec: SpawnSpec): string[] | string {
  if (typeof spec.command === "string") return [spec.shell, "-c", spec.command];
  if (spec.command.length === 0 || spec.command[0] === "") return "cannot start command: it is empty";
  return spec.command;
}

/**
 * The command as errors name it: the shell, or the program. Never the command's text: placeholders
 * rendered into it may be secrets (`{{ params.token }}` of a `secret: true` param), and errors are
 * shown to every viewer.
 */
function describe(spec: SpawnSpec): string {
  return typeof spec.command === "string" ? `the job's command (${spec.shell} -c)` : JSON.stringify(spec.command[0]);
}

/**
 * child_process's own refusal of a NUL byte quotes the value ("The property 'options.env['TOKEN']' must be a
 * string without null bytes. Received 'hunter2...'"), which may be a secret: said as posixSpawn.ts says it,
 * naming the variable only.
 */
function withoutValue(e: Error): string {
  const m = /^The (?:property|argument) '(.+?)' must be a string without null bytes/.exec(e.message);
  if (m === null) return e.message;
  const variable = /^options\.env\['(.+)'\]$/.exec(m[1]!)?.[1];
  return `spawn: strings may not contain null bytes (${variable === undefined ? "an argument of the command" : `the environment variable ${variable}`} has one)`;
}

function spawnErrorReason(spec: SpawnSpec, e: NodeJS.ErrnoException): string {
  const what = describe(spec);
  switch (e.code) {
    case "ENOENT":
      // Node reports a missing cwd as ENOENT of the command: say which it is.
      if (!existsSync(spec.cwd)) return `cannot start ${what}: working directory ${spec.cwd} does not exist`;
      return `cannot start ${what}: command not found (ENOENT)`;
    case "EACCES":
      return `cannot start ${what}: permission denied, not executable (EACCES)`;
    // Resource limits of svcd itself, not faults of the job: say which limit to raise.
    case "EMFILE":
      return `cannot start ${what}: svcd has no file descriptors left (EMFILE): raise its limit (ulimit -n, systemd LimitNOFILE=)`;
    case "ENFILE":
      return `cannot start ${what}: the system has no file descriptors left (ENFILE)`;
    case "EAGAIN":
      return `cannot start ${what}: no more processes allowed (EAGAIN): raise the limit (ulimit -u, systemd TasksMax=)`;
    case "ENOMEM":
      return `cannot start ${what}: out of memory (ENOMEM)`;
    default:
      return `cannot start ${what}: ${e.message}`;
  }
}

function failedHandle(reason: string | Promise<string>): ProcessHandle {
  const exited = Promise.resolve(reason).then(
    (spawnError): ExitInfo => ({ code: null, signal: null, spawnError }),
  );
  return { pid: null, pidStart: null, spawning: null, exited, stop: () => {}, kill: () => {} };
}

/** What track() needs of a child: a ChildProcess, or posixSpawn's equivalent. */
interface Child extends EventEmitter {
  readonly pid?: number | undefined;
  /** posixSpawn's: the start time when known without reading /proc (null or absent: read it). */
  readonly startTime?: string | null;
  readonly stdout: PipeReader | null;
  readonly stderr: PipeReader | null;
}

function track(child: Child, pid: number, opts: StartOptions): ProcessHandle {
  // Read on first use, or at the end of this turn at the latest: the start time
  // is fixed at fork, and the leader cannot be reaped (its pid reused) before
  // its exit event is handled, in a later turn. Not reading it here keeps a
  // burst of spawns one spawn apart.
  let pidStart: string | null | undefined = child.startTime ?? undefined;
  const readPidStart = (): string | null => (pidStart === undefined ? (pidStart = processStartTime(pid)) : pidStart);
  queueMicrotask(readPidStart);
  const maxLineBytes = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const drainMs = opts.drainMs ?? DEFAULT_DRAIN_MS;

  let exit: { code: number | null; signal: string | null; watchError: string | null } | null = null;
  let openPipes = 2;
  let done = false;
  let stopRequested = false;
  let graceTimer: NodeJS.Timeout | undefined;
  let drainTimer: NodeJS.Timeout | undefined;
  let resolveExited!: (info: ExitInfo) => void;
  const exited = new Promise<ExitInfo>((r) => (resolveExited = r));

  const deliver = (stream: OutStream, line: string): void => {
    try {
      opts.onLine(stream, line);
    } catch (e: unknown) {
      const err = toError(e);
      if (opts.logger) opts.logger.error({ err, pid, stream }, "executor: onLine handler threw; line dropped");
      else queueMicrotask(() => { throw err; });
    }
  };

  const finish = (): void => {
    if (done || exit === null) return;
    done = true;
    clearTimeout(graceTimer);
    clearTimeout(drainTimer);
    // Control-group semantics: nothing of the run outlives its leader.
    if (isGroupAlive(pid)) signalGroup(pid, "SIGKILL");
    const info: ExitInfo = { code: exit.code, signal: exit.signal, spawnError: null };
    if (exit.watchError !== null) info.watchError = exit.watchError;
    resolveExited(info);
  };

  const pipes: PipeReader[] = [];
  /** Per pipe: split what is left of a sliced chunk now (the leader has exited). */
  const catchUps: Array<() => void> = [];
  const attach = (stream: OutStream, pipe: PipeReader | null): void => {
    if (pipe === null) {
      openPipes--;
      return;
    }
    pipes.push(pipe);
    const splitter = createLineSplitter((line) => deliver(stream, line), maxLineBytes);
    let ended = false;
    let endDeferred = false;
    /** The part of a chunk not split yet; the pipe is paused while it is set. */
    let rest: Buffer | null = null;
    const endNow = (): void => {
      splitter.end();
      openPipes--;
      if (openPipes === 0) finish();
    };
    const onEnd = (): void => {
      if (ended) return;
      ended = true;
      if (rest !== null) endDeferred = true; // after the rest is split
      else endNow();
    };
    const feed = (chunk: Buffer): void => {
      if (exit !== null || chunk.length <= SLICE_BYTES) {
        splitter.push(chunk);
        return;
      }
      const deadline = performance.now() + SLICE_MS;
      let off = 0;
      while (off < chunk.length) {
        const end = Math.min(chunk.length, off + SLICE_BYTES);
        splitter.push(chunk.subarray(off, end));
        off = end;
        if (off < chunk.length && exit === null && performance.now() >= deadline) {
          rest = chunk.subarray(off);
          pipe.pause();
          setImmediate(next);
          return;
        }
      }
    };
    const next = (): void => {
      const chunk = rest;
      if (chunk === null) return; // caught up already
      rest = null;
      feed(chunk);
      if (rest !== null) return; // another turn is scheduled
      if (endDeferred) endNow();
      else pipe.resume();
    };
    catchUps.push(next);
    pipe.on("data", (chunk: Buffer) => {
      if (rest !== null) rest = Buffer.concat([rest, chunk]); // not expected while paused; never reorder
      else feed(chunk);
    });
    pipe.once("end", onEnd);
    pipe.once("close", onEnd); // destroyed without 'end' (see the escaped-pipe bound)
    pipe.on("error", (e) => {
      opts.logger?.warn({ err: toError(e), pid, stream }, "executor: pipe error");
      onEnd();
    });
  };
  // Wired at the end of this turn, like pidStart: nothing can reach the listeners before (pipe
  // data and the exit come in later turns), and a burst of spawns is not one wiring apart.
  queueMicrotask(() => {
    attach("stdout", child.stdout);
    attach("stderr", child.stderr);

    child.on("error", (e) => {
      // After a successful spawn this only reports a failed child.kill(), which we never call.
      opts.logger?.warn({ err: toError(e), pid }, "executor: child process error");
    });
    child.once("exit", (code, signal, watchError?: string) => {
      exit = { code, signal, watchError: watchError ?? null };
      if (watchError) opts.logger?.error({ pid }, `executor: ${watchError}`);
      for (const catchUp of catchUps) catchUp();
      if (openPipes === 0) return finish();
      drainTimer = setTimeout(() => {
        signalGroup(pid, "SIGKILL");
        drainTimer = setTimeout(() => {
          for (const p of pipes) p.destroy();
        }, ESCAPED_PIPE_WAIT_MS);
      }, drainMs);
    });
  });

  const stop = (): void => {
    if (done || stopRequested) return;
    stopRequested = true;
    terminateGroup(pid);
    graceTimer = setTimeout(() => {
      if (!done && isGroupAlive(pid)) signalGroup(pid, "SIGKILL");
    }, opts.killGraceMs);
  };

  const kill = (): void => {
    if (done) return;
    stopRequested = true;
    clearTimeout(graceTimer);
    signalGroup(pid, "SIGKILL");
  };

  return new TrackedProcess(pid, readPidStart, exited, stop, kill);
}
