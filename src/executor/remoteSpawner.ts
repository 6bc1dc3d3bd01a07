/**
 * Starts jobs through the spawner helper process (spawnerMain.ts) instead of
 * forking svcd itself.
 *
 * Why: Node spawns with fork(), which copies the parent's page tables and
 * makes the parent wait until the child has exec'd, so every spawn costs
 * more the more memory the parent has (nodejs/node#14917). Measured here:
 * 50 processes started at once from a fresh Node process (~6 MB of private
 * memory) in ~60 ms, from svcd (~40 MB) in ~100 ms. The helper keeps the
 * fork cost of a fresh process, takes it off svcd's event loop, and starts
 * a batch (every run a dispatch pass starts) from one message.
 *
 * The daemon still owns everything else: it reads the job's output from the
 * pipes' read ends, which the helper passes over the IPC channel, and signals
 * the process group itself. Only the exit status comes through the helper.
 *
 * If the helper dies, the jobs it started are killed (their exit status
 * would be lost) and end with `killed by SIGKILL`; the next job starts a new
 * helper. If it cannot be started at all, jobs are spawned by svcd itself.
 */
import { fork, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { existsSync } from "node:fs";
import { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";
import { signalGroup } from "./liveness.js";
import type { SpawnerMessage, SpawnRequest } from "./spawnerMain.js";

/** dist/executor/spawnerMain.js, from dist/executor/ and from the one-file bundle in dist/bundle/ alike. */
export const SPAWNER_SCRIPT = fileURLToPath(new URL("../executor/spawnerMain.js", import.meta.url));

/**
 * A process the helper started: the part of ChildProcess the executor uses.
 * Its exit is remembered: it may come in before anyone listens (the start
 * resolves a promise, whose continuation runs after the IPC messages already
 * read), and a listener added later still hears it.
 */
export class RemoteChild extends EventEmitter {
  stdout: Socket | null = null;
  stderr: Socket | null = null;
  private exitStatus: [code: number | null, signal: string | null] | null = null;

  constructor(
    readonly pid: number,
    readonly pidStart: string | null,
  ) {
    super();
  }

  exited(code: number | null, signal: string | null): void {
    if (this.exitStatus) return;
    this.exitStatus = [code, signal];
    this.emit("exit", code, signal);
  }

  override once(event: string | symbol, listener: Parameters<EventEmitter["once"]>[1]): this {
    const status = this.exitStatus;
    if (event === "exit" && status) {
      queueMicrotask(() => listener(...status));
      return this;
    }
    return super.once(event, listener);
  }
}

/**
 * How a start through the helper went: the process, why it could not start,
 * or `fallback` when the request never reached a helper (none could be
 * started, or its channel was closed): then svcd spawns the process itself.
 */
export type RemoteStart = { child: RemoteChild } | { error: NodeJS.ErrnoException } | { fallback: string };

interface Pending {
  resolve: (r: RemoteStart) => void;
  child: RemoteChild | null;
  /** The pipes' handles as they come in (stdout, stderr). */
  pipes: [unknown, unknown];
  /** Set at "started": the pipes are overdue when it fires. */
  timer?: NodeJS.Timeout;
}

/** One helper process and the requests it holds (sent and not settled, or started and not exited). */
interface Helper {
  proc: ChildProcess;
  startedAt: number;
  ids: Set<number>;
  /** No new requests: it is disconnected once its last process has exited. */
  retiring: boolean;
}

/**
 * How long after "started" the pipes may take. They follow at once unless
 * they were lost; the bound only matters for a process that keeps running.
 */
const PIPES_WAIT_MS = 10_000;

/** A helper that exits this soon after its start is not started again: jobs are spawned in-process instead. */
const CRASH_LOOP_MS = 2_000;

export class RemoteSpawner {
  /** The helper new requests go to. */
  private current: Helper | null = null;
  /** Every helper still running: the current one and retiring ones. */
  private readonly helpers = new Set<Helper>();
  private readonly helperOf = new Map<number, Helper>();
  private nextId = 1;
  /** Sent, waiting for "started" and both pipes (or "failed"). */
  private readonly pending = new Map<number, Pending>();
  /** Started and not exited. */
  private readonly live = new Map<number, RemoteChild>();
  private queue: SpawnRequest[] = [];
  private closed = false;
  private broken = false;
  private checked = false;

  constructor(private readonly opts: { script?: string; logger?: Logger } = {}) {}

  /** False once the helper proved unusable (missing, or crashing at start): spawn in-process then. */
  get usable(): boolean {
    if (!this.checked) {
      this.checked = true;
      if (!existsSync(this.script)) {
        this.broken = true;
        this.opts.logger?.warn({ script: this.script }, "the spawner helper is missing: jobs are started by svcd itself");
      }
    }
    return !this.closed && !this.broken;
  }

  private get script(): string {
    return this.opts.script ?? SPAWNER_SCRIPT;
  }

  /** Pid of the helper new jobs go to, null when none runs. */
  get pid(): number | null {
    return this.current?.proc.pid ?? null;
  }

  /** Starts the helper now rather than at the first job. */
  start(): void {
    this.ensure();
  }

  /**
   * Starts one process. Requests made in the same turn go to the helper in
   * one message. Resolves once the process runs and both pipes are here, or
   * with the reason it could not start.
   */
  spawn(file: string, args: string[], cwd: string, env: Record<string, string>): Promise<RemoteStart> {
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, child: null, pipes: [null, null] });
      this.queue.push({ id, file, args, cwd, env });
      if (this.queue.length === 1) queueMicrotask(() => this.flush());
    });
  }

  /** Stops the helpers. Jobs they started keep running (the daemon stops them first). */
  close(): void {
    this.closed = true;
    this.current = null;
    for (const h of this.helpers) if (h.proc.connected) h.proc.disconnect();
    for (const id of [...this.pending.keys()]) this.fail(id, spawnerError("svcd is stopping"));
  }

  private flush(): void {
    const reqs = this.queue;
    this.queue = [];
    if (reqs.length === 0) return;
    const helper = this.ensure();
    try {
      if (!helper) throw new Error("no spawner helper could be started");
      helper.proc.send({ t: "spawn", reqs });
      for (const r of reqs) this.assign(r.id, helper);
    } catch (e) {
      // Not sent, so not started: svcd starts them itself (at worst it fails the same way, with the reason).
      const why = `svc's spawner helper: ${toError(e).message}`;
      this.opts.logger?.warn({ err: toError(e) }, "could not hand jobs to the spawner helper: svcd starts them itself");
      for (const r of reqs) this.resolveWith(r.id, { fallback: why });
    }
  }

  private ensure(): Helper | null {
    if (this.closed || !this.usable) return null;
    if (this.current?.proc.connected) return this.current;
    const proc = fork(this.script, [], {
      execArgv: [],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", SVC_SPAWNER: "1" },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      serialization: "json",
      // Its own process group: a Ctrl-C for svcd must not end it while jobs drain.
      detached: true,
    });
    if (proc.pid === undefined) {
      // Not started (no descriptor or process left for it): 'error' follows; nothing to keep.
      proc.on("error", () => {});
      return null;
    }
    const helper: Helper = { proc, startedAt: Date.now(), ids: new Set(), retiring: false };
    this.current = helper;
    this.helpers.add(helper);
    proc.on("message", (m: SpawnerMessage, handle?: unknown) => this.onMessage(m, handle));
    proc.on("error", (e) => this.opts.logger?.warn({ err: toError(e) }, "spawner helper: IPC error"));
    proc.once("exit", (code, signal) => this.onExit(helper, code, signal));
    proc.unref(); // only the channel holds svcd's event loop, and only while jobs start or run (refresh)
    this.refresh(helper);
    return helper;
  }

  private onMessage(m: SpawnerMessage, handle: unknown): void {
    switch (m.t) {
      case "started": {
        const p = this.pending.get(m.id);
        if (!p) return;
        p.child = new RemoteChild(m.pid, m.pidStart);
        this.live.set(m.id, p.child);
        p.timer = setTimeout(() => this.pipesLost(m.id), PIPES_WAIT_MS);
        return;
      }
      case "pipe": {
        const p = this.pending.get(m.id);
        if (!p?.child) return;
        if (!handle) return this.pipesLost(m.id);
        p.pipes[m.fd - 1] = handle;
        const [out, err] = p.pipes;
        if (out === null || err === null) return; // the other one is still on its way
        // Each is the pipe's libuv handle, passed with SCM_RIGHTS; a Socket reads it like child.stdout.
        // Made only now, right before the start resolves and the executor listens: a Socket starts
        // reading at once, and an end it read before anyone listened would be missed.
        p.child.stdout = pipeSocket(out);
        p.child.stderr = pipeSocket(err);
        this.settle(m.id, { child: p.child });
        return;
      }
      case "failed":
        this.fail(m.id, Object.assign(new Error(m.message), { code: m.code ?? undefined }));
        return;
      case "exit": {
        // Its pipes come before its exit; still missing now, they were dropped on the way.
        if (this.pending.get(m.id)?.child) this.pipesLost(m.id);
        const child = this.live.get(m.id);
        if (!child) return;
        this.live.delete(m.id);
        this.release(m.id);
        child.exited(m.code, m.signal);
        return;
      }
    }
  }

  /**
   * A started process whose pipes did not reach svcd: when svcd has no file
   * descriptor left, the kernel drops the ones passed to it, and Node gives up
   * on the message after a few tries (leaving them open in the helper). Its
   * output cannot be read: the process is killed and its start fails
   * (EMFILE), which the run records. The helper, which now holds descriptors
   * it will never free, takes no new jobs and ends with its last one.
   */
  private pipesLost(id: number): void {
    const p = this.pending.get(id);
    if (!p?.child) return;
    signalGroup(p.child.pid, "SIGKILL");
    const helper = this.helperOf.get(id);
    if (helper && !helper.retiring) {
      helper.retiring = true;
      if (this.current === helper) this.current = null;
      this.opts.logger?.warn({ pid: helper.proc.pid }, "a job's output pipes did not reach svcd (no file descriptors left?): its spawner helper is replaced");
    }
    this.fail(id, Object.assign(new Error("its output pipes did not reach svcd"), { code: "EMFILE" }));
  }

  /** Resolves a request with its process. */
  private settle(id: number, result: { child: RemoteChild }): void {
    this.resolveWith(id, result);
  }

  private resolveWith(id: number, result: RemoteStart): void {
    const p = this.pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(id);
    p.resolve(result);
  }

  /** Resolves a request with why it could not start; a process it started is gone or killed. */
  private fail(id: number, error: NodeJS.ErrnoException): void {
    const p = this.pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(id);
    for (const h of p.pipes) (h as { close?: () => void } | null)?.close?.();
    if (p.child) {
      signalGroup(p.child.pid, "SIGKILL");
      this.live.delete(id);
    }
    this.release(id);
    p.resolve({ error });
  }

  private assign(id: number, helper: Helper): void {
    this.helperOf.set(id, helper);
    helper.ids.add(id);
    this.refresh(helper);
  }

  /** The request is over (failed, or its process exited): a retiring helper with none left goes. */
  private release(id: number): void {
    if (this.live.has(id) || this.pending.has(id)) return;
    const helper = this.helperOf.get(id);
    if (!helper) return;
    this.helperOf.delete(id);
    helper.ids.delete(id);
    this.refresh(helper);
    if (helper.retiring && helper.ids.size === 0 && helper.proc.connected) helper.proc.disconnect();
  }

  /**
   * A helper is gone. Its jobs' exit statuses would be lost: they are killed
   * (whole groups) and reported as ended by SIGKILL; its requests not
   * answered fail.
   */
  private onExit(helper: Helper, code: number | null, signal: NodeJS.Signals | null): void {
    this.helpers.delete(helper);
    if (this.current === helper) this.current = null;
    const ids = [...helper.ids];
    const running = ids.filter((id) => this.live.has(id) && !this.pending.has(id)).length;
    if (!this.closed && !(helper.retiring && ids.length === 0)) {
      const fields = { code, signal, killed_jobs: running };
      if (Date.now() - helper.startedAt < CRASH_LOOP_MS && running === 0 && !helper.retiring) {
        this.broken = true;
        this.opts.logger?.error(fields, "the spawner helper exited right after its start: jobs are started by svcd itself from now on");
      } else {
        this.opts.logger?.error(fields, `the spawner helper exited; ${running} running job(s) were killed; the next job starts a new helper`);
      }
    }
    for (const id of ids) {
      if (this.pending.has(id)) {
        this.fail(id, spawnerError(`svc's spawner helper exited (${signal ?? `code ${code}`})`));
        continue;
      }
      const child = this.live.get(id);
      if (!child) continue;
      this.live.delete(id);
      this.release(id);
      signalGroup(child.pid, "SIGKILL");
      child.exited(null, "SIGKILL");
    }
  }

  /** A helper's IPC channel keeps svcd's event loop alive only while one of its jobs starts or runs. */
  private refresh(helper: Helper): void {
    const channel = helper.proc.channel as { ref?: () => void; unref?: () => void } | null | undefined;
    if (helper.ids.size > 0) channel?.ref?.();
    else channel?.unref?.();
  }
}

function pipeSocket(handle: unknown): Socket {
  return new Socket({ handle, readable: true, writable: false } as ConstructorParameters<typeof Socket>[0]);
}

function spawnerError(message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code: "ESPAWNER" });
}
