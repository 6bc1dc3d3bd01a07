/**
 * Jobs started with posix_spawn instead of child_process's fork (Linux).
 *
 * fork() copies the page tables of all of svcd's memory for each job and the
 * child tears them down again at exec, while svcd's event loop waits: the
 * bigger svcd, the slower every spawn (nodejs/node#14917; libuv forks on
 * Linux). glibc's posix_spawn starts the child with
 * clone(CLONE_VM | CLONE_VFORK), which copies nothing: 50 jobs due at once
 * start several times sooner, and the cost no longer grows with the number of
 * jobs svcd holds (docs/PERFORMANCE.md, Fixes). The binding is
 * src/executor/native/spawn.c, built by `npm install` (binding.gyp).
 *
 * posixSpawn() gives the same child as `child_process.spawn(file, args,
 * { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] })`: its own
 * session and process group, every signal at its default disposition and
 * none blocked (glibc leaves its two internal signals, 32 and 33, ignored),
 * stdin /dev/null, stdout and stderr as pipes read on the event loop (NativePipe: the
 * binding's libuv read, with a readable Socket's events; net.Sockets where the binding
 * predates it), an "exit"
 * event with (code, signal name), and a third argument, a message, when the
 * exit could not be watched and the process was killed. A command without a slash is looked up in
 * the job's own PATH, and an executable without a #! line runs with /bin/sh,
 * as child_process (execvp) does. Where the binding is missing
 * (not Linux, a failed build, a kernel without pidfd_open) or
 * SVC_SPAWN=fork is set, posixSpawn() returns null and the caller forks.
 */
import { EventEmitter } from "node:events";
import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { createRequire } from "node:module";
import { Socket } from "node:net";
import { constants as osConstants } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { processStartTime } from "./liveness.js";

interface Binding {
  /**
   * [pid, stdout fd, stderr fd, start time or null (a binding built before it: three)], or a negative errno.
   * `envp`: the K=V strings, or (where `envBlock` is true) them joined by NUL, one string to convert.
   */
  spawn(
    file: string,
    argv: string[],
    envp: string[] | string,
    cwd: string,
    onExit: (code: number | null, signo: number | null, watchError?: number | null) => void,
  ): [number, number, number, (string | null)?] | number;
  /** spawn() on a libuv worker thread: onSpawned gets what spawn() returns, on the event loop. */
  spawnAsync?(
    file: string,
    argv: string[],
    envp: string[] | string,
    cwd: string,
    onExit: (code: number | null, signo: number | null, watchError?: number | null) => void,
    onSpawned: (result: [number, number, number, (string | null)?] | number) => void,
  ): number | undefined;
  /** The binding takes the environment as one NUL-joined string (one conversion, not ~100: a binding built before it has no such property). */
  envBlock?: boolean;
  /**
   * Reads a pipe's read end on the event loop: onEvent(0, chunk), (1) at its end, (2, libuv error),
   * (3) once closed. The handle, or a negative libuv error (the fd is closed then). A binding built
   * before it has none (its pipes are net.Sockets).
   */
  readPipe?(fd: number, onEvent: (kind: number, value: Buffer | number | undefined) => void): object | number;
  /** Stops (false) or restarts (true) a readPipe's reading. */
  pipeRead?(handle: object, on: boolean): number;
  /** Closes a readPipe's pipe and its fd; its onEvent(3) follows. */
  pipeClose?(handle: object): void;
  supported(): boolean;
  /** Test seam: the next spawn's exit watch fails (spawn.c). */
  failNextWatch(): void;
}

/**
 * A child's stdout or stderr as startProcess reads it: "data" (a Buffer), "end", "error", "close",
 * and pause/resume/destroy, as a readable net.Socket has them (NativePipe, or a Socket where the
 * binding predates readPipe).
 */
export interface PipeReader extends EventEmitter {
  pause(): unknown;
  resume(): unknown;
  destroy(): unknown;
}

/** What startProcess uses of a child: the same shape as a ChildProcess. */
export interface SpawnedChild extends EventEmitter {
  readonly pid: number;
  readonly stdout: PipeReader;
  readonly stderr: PipeReader;
  /**
   * /proc/<pid>/stat's start time (field 22), known without reading it (spawn.c, boottime_ticks), or
   * null: read it from /proc. The first read of a new child's stat waits until its exec is done
   * (~0.3 ms of the event loop per spawn here, docs/perf/FIXES.md).
   */
  readonly startTime: string | null;
}

/** The binding, loaded once when this module is; null where jobs are forked instead. */
const binding = load();
function load(): Binding | null {
  if (process.platform !== "linux" || process.env.SVC_SPAWN === "fork") return null;
  try {
    // Two levels below the package root, like this file: dist/executor, dist/bundle (the one-file daemon), src/executor.
    const path = fileURLToPath(new URL("../../build/Release/svc_spawn.node", import.meta.url));
    const b = createRequire(import.meta.url)(path) as Binding;
    return b.supported() ? b : null;
  } catch {
    return null; // not built (npm install could not compile it): child_process it is
  }
}

/**
 * Whether the environment goes to the binding as one string of its K=V entries joined by NUL: one
 * conversion to C instead of one per variable (~37 -> ~20 µs a spawnAsync call with 80 variables,
 * docs/perf/FIXES.md). A binding built before it takes the array.
 */
export const envAsOneString = binding?.envBlock === true;

/** A binding with the pipe reader (readPipe and its two companions). */
type PipeBinding = Required<Pick<Binding, "readPipe" | "pipeRead" | "pipeClose">>;

/**
 * A pipe's read end read by the binding (libuv's read on the event loop, as net.Socket's handle
 * does) without a stream around it: two net.Sockets, built and torn down for every run, cost
 * ~65-125 µs of CPU a spawn (docs/perf/FIXES.md). Emits what startProcess listens to on a
 * Socket: "data" with each chunk, "end", "error" (a failed read; only when listened to), then
 * "close" once the fd is closed. Reading starts at once: listeners are added in the turn that
 * creates it, before any read can complete.
 */
class NativePipe extends EventEmitter implements PipeReader {
  #handle: object | null = null;
  #paused = false;
  #ended = false;

  constructor(
    private readonly b: PipeBinding,
    fd: number,
  ) {
    super();
    const h = b.readPipe(fd, (kind, value) => this.#event(kind, value));
    if (typeof h === "number") {
      // Told after this turn's microtasks, where startProcess adds its listeners (a nextTick could come before).
      this.#ended = true;
      setImmediate(() => {
        this.#error(h, "open");
        this.emit("close");
      });
    } else {
      this.#handle = h;
    }
  }

  #event(kind: number, value: Buffer | number | undefined): void {
    if (kind === 0) {
      this.emit("data", value);
    } else if (kind === 3) {
      this.emit("close");
    } else {
      this.#ended = true;
      try {
        if (kind === 1) this.emit("end");
        else this.#error(value as number, "read");
      } finally {
        this.destroy();
      }
    }
  }

  /** An "error" for a libuv error, when listened to (startProcess always does: a stream without a listener would throw it). */
  #error(uvError: number, syscall: string): void {
    const code = ERRNO_NAMES.get(-uvError) ?? `E${-uvError}`;
    if (this.listenerCount("error") > 0) this.emit("error", Object.assign(new Error(`${syscall} ${code}`), { errno: uvError, code, syscall }));
  }

  pause(): this {
    if (this.#handle !== null && !this.#ended && !this.#paused) {
      this.#paused = true;
      this.b.pipeRead(this.#handle, false);
    }
    return this;
  }

  resume(): this {
    if (this.#handle !== null && !this.#ended && this.#paused) {
      this.#paused = false;
      const err = this.b.pipeRead(this.#handle, true);
      if (typeof err === "number" && err < 0) this.#event(2, err); // as a failed read
    }
    return this;
  }

  /** Closes the pipe (a child still writing to it gets SIGPIPE, as with a destroyed Socket); "close" follows, once. */
  destroy(): this {
    const h = this.#handle;
    if (h !== null) {
      this.#handle = null;
      this.#ended = true;
      this.b.pipeClose(h);
    }
    return this;
  }
}

/** The binding's pipe reader, where it has one. */
const pipeReader = typeof binding?.readPipe === "function" && typeof binding.pipeRead === "function" && typeof binding.pipeClose === "function"
  ? (binding as PipeBinding)
  : null;

/** Tests and benchmarks: read the pipes with net.Sockets (true) or, where the binding can, with NativePipe (false, the default). */
let socketPipes = false;

function pipeOf(fd: number): PipeReader {
  return pipeReader !== null && !socketPipes ? new NativePipe(pipeReader, fd) : new Socket({ fd, readable: true, writable: false });
}

/** How jobs are started here: "posix_spawn" or "fork" (child_process). */
export const spawnMethod: "posix_spawn" | "fork" = binding === null ? "fork" : "posix_spawn";

const SIGNAL_NAMES = new Map(Object.entries(osConstants.signals).map(([name, n]) => [n, name]));
const ERRNO_NAMES = new Map(Object.entries(osConstants.errno).map(([name, n]) => [n, name]));

function errnoError(errno: number, file: string): NodeJS.ErrnoException {
  const code = ERRNO_NAMES.get(errno) ?? `E${errno}`;
  return Object.assign(new Error(`spawn ${file} ${code}`), { errno: -errno, code, syscall: "spawn", path: file });
}

/** libuv's negative errors are negative errnos on Linux. */
function lostWatch(uvError: number, signal: string | null): string {
  const code = ERRNO_NAMES.get(-uvError) ?? `error ${uvError}`;
  return `svcd lost track of the process (polling its pidfd failed: ${code}), so it killed its process group${signal ? ` (${signal})` : ""} rather than leave it running unwatched`;
}

/**
 * Tests only: the next posixSpawn's exit watch fails as a failing pidfd poll
 * does (the kernel reports an error on the polled fd). False where jobs are
 * forked (no binding).
 */
export const testSeam = {
  /** Reads the pipes of the children started from now on with net.Sockets (true) or the binding's reader (false); whether the binding has one. */
  socketPipes(on: boolean): boolean {
    socketPipes = on;
    return pipeReader !== null;
  },
  /** The reader a child's pipe would get, on any fd. */
  readPipe(fd: number): PipeReader {
    return pipeOf(fd);
  },
  failNextExitWatch(): boolean {
    if (binding === null) return false;
    if (typeof binding.failNextWatch !== "function") throw new Error("the posix_spawn binding predates failNextWatch: rebuild it (npm run build:native)");
    binding.failNextWatch();
    return true;
  },
};

/**
 * The file to execute: `file` itself when it has a slash (relative to `cwd`),
 * else the first executable regular file of that name in the job's PATH
 * (execvp's search; an empty entry is the working directory).
 */
function lookUp(file: string, cwd: string, path: string | undefined): string | NodeJS.ErrnoException {
  if (file.includes("/")) return file;
  let sawDenied = false;
  for (const dir of (path ?? "/usr/bin:/bin").split(":")) {
    const candidate = join(isAbsolute(dir) ? dir : resolve(cwd, dir), file);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EACCES") sawDenied = true;
    }
  }
  return errnoError(sawDenied ? osConstants.errno.EACCES : osConstants.errno.ENOENT, file);
}

/** Throws on a NUL byte, naming where it is (`what`) but never the value: it may be a secret (an env value, a param). */
function checkNul(s: string, what: () => string): void {
  if (s.includes("\0")) throw Object.assign(new TypeError(`spawn: strings may not contain null bytes (${what()} has one)`), { code: "ERR_INVALID_ARG_VALUE" });
}

const inVariable = (s: string) => () => `the environment variable ${s.slice(0, s.indexOf("="))}`;

/** A frozen base environment's `K=V` strings (each checked for NUL), and where each key's string is. */
interface PreparedEnv {
  envp: readonly string[];
  index: ReadonlyMap<string, number>;
}
const preparedEnvs = new WeakMap<object, PreparedEnv>();

function prepareEnv(base: Readonly<Record<string, string | undefined>>): PreparedEnv {
  let p = preparedEnvs.get(base);
  if (p === undefined) {
    const envp: string[] = [];
    const index = new Map<string, number>();
    for (const [k, v] of Object.entries(base)) {
      if (v === undefined) continue;
      const s = `${k}=${v}`;
      checkNul(s, inVariable(s));
      index.set(k, envp.length);
      envp.push(s);
    }
    preparedEnvs.set(base, (p = { envp, index }));
  }
  return p;
}

/**
 * The `K=V` strings of `env`, in the order child_process gives them. An env whose prototype is a
 * frozen object (the engine's: `Object.create(ctx.spawnEnv)` plus the run's own variables, see
 * engine/prepare.ts) inherits that object's variables, as child_process reads them too (for...in):
 * the base's strings are then built and checked once per base object, not once per spawn (~100
 * variables cost ~80 µs a spawn; docs/perf/FIXES.md). Throws on a NUL byte, as child_process does.
 */
export function toEnvp(env: Readonly<Record<string, string | undefined>>): string[] {
  const proto = Object.getPrototypeOf(env) as object | null;
  if (proto === null || proto === Object.prototype || !Object.isFrozen(proto)) {
    const envp: string[] = [];
    for (const k in env) {
      const v = env[k];
      if (v === undefined) continue;
      const s = `${k}=${v}`;
      checkNul(s, inVariable(s));
      envp.push(s);
    }
    return envp;
  }
  const base = prepareEnv(proto as Readonly<Record<string, string | undefined>>);
  const envp: Array<string | null> = base.envp.slice();
  let removed = false;
  for (const k of Object.keys(env)) {
    const v = env[k];
    const at = base.index.get(k);
    if (v === undefined) {
      // An own undefined hides the inherited value (child_process skips it too).
      if (at !== undefined) {
        envp[at] = null;
        removed = true;
      }
      continue;
    }
    const s = `${k}=${v}`;
    checkNul(s, inVariable(s));
    if (at === undefined) envp.push(s);
    else envp[at] = s;
  }
  return removed ? envp.filter((s): s is string => s !== null) : (envp as string[]);
}

/** Whether the binding's start times are /proc's: checked against /proc on the first one it gives. */
let startTimes: "unchecked" | "trusted" | "distrusted" = "unchecked";

function startTimeOf(pid: number, given: string | null | undefined): string | null {
  if (typeof given !== "string" || startTimes === "distrusted") return null;
  if (startTimes === "unchecked") {
    const read = processStartTime(pid);
    if (read === null) return null; // gone already: check the next one
    startTimes = read === given ? "trusted" : "distrusted";
    return read;
  }
  return given;
}

type SpawnResult = [number, number, number, (string | null)?] | number;

/** What posixSpawn and posixSpawnAsync share: the checked arguments, the exit callback, the child once spawned. */
function prepare(file: string, args: string[], opts: { cwd: string; env: Record<string, string | undefined> }) {
  checkNul(file, () => "the program's name");
  checkNul(opts.cwd, () => "the working directory");
  for (const s of args) checkNul(s, () => "an argument of the command");
  const strings = toEnvp(opts.env);
  // No string holds a NUL (toEnvp checks): joined by NUL they split back exactly.
  const envp = envAsOneString ? strings.join("\0") : strings;
  const exe = lookUp(file, opts.cwd, opts.env.PATH);
  if (typeof exe !== "string") return exe;
  const child = new EventEmitter() as SpawnedChild & { pid: number; stdout: PipeReader; stderr: PipeReader; startTime: string | null };
  const onExit = (code: number | null, signo: number | null, watchError?: number | null): void => {
    const signal = signo === null ? null : (SIGNAL_NAMES.get(signo) ?? `SIG${signo}`);
    // A binding built before watchError existed passes two arguments.
    child.emit("exit", code, signal, typeof watchError === "number" ? lostWatch(watchError, signal) : undefined);
  };
  /** The child, from the binding's [pid, stdout fd, stderr fd, start time]. */
  const settle = (r: Exclude<SpawnResult, number>): SpawnedChild => {
    child.pid = r[0];
    child.startTime = startTimeOf(r[0], r[3]);
    child.stdout = pipeOf(r[1]);
    child.stderr = pipeOf(r[2]);
    return child;
  };
  return { envp, exe, onExit, settle };
}

/**
 * Starts `file` with `args` like child_process.spawn with `detached: true`
 * and piped stdout/stderr. Null when posix_spawn is not available here (the
 * caller forks); an ErrnoException when the process could not start
 * (ENOENT, EACCES, EMFILE...); throws on a NUL byte, as child_process does.
 * The event loop waits while the kernel starts the child (~0.7 ms here):
 * svcd starts jobs with posixSpawnAsync; this one is the benchmarks' floor.
 */
export function posixSpawn(file: string, args: string[], opts: { cwd: string; env: Record<string, string | undefined> }): SpawnedChild | NodeJS.ErrnoException | null {
  const b = binding;
  if (b === null) return null;
  const p = prepare(file, args, opts);
  if (p instanceof Error) return p;
  let r = b.spawn(p.exe, [file, ...args], p.envp, opts.cwd, p.onExit);
  // An executable without a #! line: run it with /bin/sh, as execvp (and so child_process) does.
  if (r === -osConstants.errno.ENOEXEC) r = b.spawn("/bin/sh", ["/bin/sh", p.exe, ...args], p.envp, opts.cwd, p.onExit);
  if (typeof r === "number") return errnoError(-r, file);
  return p.settle(r);
}

/** Whether posixSpawnAsync can start processes here (the binding is loaded and has spawnAsync). */
export const asyncSpawn = typeof binding?.spawnAsync === "function";

/**
 * posixSpawn with the spawn itself on a libuv worker thread: the event loop
 * goes on (recording other runs, serving the API) while the kernel starts the
 * child, which is most of a spawn's cost (posix_spawn returns once the child
 * has exec'd). `done` gets the child or the ErrnoException, in a later turn,
 * on the event loop; the child's pipes and exit watch exist from then on.
 * Returns false when this binding cannot (the caller uses posixSpawn or
 * forks); an ErrnoException (done is not called) when the arguments already
 * say it cannot start (the command is not in PATH); throws on a NUL byte.
 */
export function posixSpawnAsync(
  file: string,
  args: string[],
  opts: { cwd: string; env: Record<string, string | undefined> },
  done: (child: SpawnedChild | NodeJS.ErrnoException) => void,
): boolean | NodeJS.ErrnoException {
  const b = binding;
  if (b === null || typeof b.spawnAsync !== "function") return false;
  const spawnAsync = b.spawnAsync.bind(b);
  const p = prepare(file, args, opts);
  if (p instanceof Error) return p;
  const onSpawned = (r: SpawnResult): void => {
    // An executable without a #! line: run it with /bin/sh, as execvp (and so child_process) does.
    if (r === -osConstants.errno.ENOEXEC && !shRetry) {
      shRetry = true;
      queue("/bin/sh", ["/bin/sh", p.exe, ...args]);
      return;
    }
    done(typeof r === "number" ? errnoError(-r, file) : p.settle(r));
  };
  let shRetry = false;
  const queue = (exe: string, argv: string[]): void => {
    const r = spawnAsync(exe, argv, p.envp, opts.cwd, p.onExit, onSpawned);
    if (typeof r === "number") queueMicrotask(() => done(errnoError(-r, file)));
  };
  queue(p.exe, [file, ...args]);
  return true;
}

/**
 * posixSpawnAsync as a promise (tests and benchmarks): the child, the ErrnoException that kept it
 * from starting, or null when posixSpawnAsync cannot start processes here. Rejects on a NUL byte.
 */
export function posixSpawnAsyncPromise(file: string, args: string[], opts: { cwd: string; env: Record<string, string | undefined> }): Promise<SpawnedChild | NodeJS.ErrnoException | null> {
  return new Promise((resolve, reject) => {
    try {
      const queued = posixSpawnAsync(file, args, opts, resolve);
      if (queued !== true) resolve(queued === false ? null : queued);
    } catch (e) {
      reject(e as Error);
    }
  });
}
