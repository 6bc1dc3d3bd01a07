/**
 * Config texts parsed off the event loop. Redacting svc.yaml for
 * `GET /api/config/source` parses it with positions and walks every node:
 * ~3 s of CPU for a 10,000-job file (3 MB), during which the daemon could
 * neither tick, dispatch nor answer. Validating a text the API was sent
 * (`POST /api/config/validate`, `/save`) costs ~0.4 s at that size. So all of
 * it runs in one worker thread (configThread.ts, the same functions as
 * before), and the daemon's loop only passes the texts and the answers.
 *
 * One worker: the machines are small, and a second would take the core the
 * daemon itself needs. It is started on the first request, does not keep
 * the process alive, takes requests in order (a queue: each waits for the
 * ones before it) and is stopped after 10 s without any (after a 3 MB
 * svc.yaml its heap holds ~300 MB until then). If it cannot start or dies, every request it
 * held fails with a 500 `internal` error (the API logs it) and the next
 * request starts a fresh one. Nothing falls back to parsing on the loop. A
 * job that throws fails alone, with the error's class and frames but not its
 * message (threadFailure). The API ends the thread when its server closes.
 *
 * The thread's file sits beside this module with the same extension:
 * dist/api/configThread.js for the per-file build, dist/bundle/configThread.mjs
 * beside the daemon's one-file bundle (scripts/bundle-svcd.mjs builds both),
 * src/api/configThread.ts in tests (loaded through tsx's loader).
 */
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { SHARE_ENV, Worker } from "node:worker_threads";
import type { RedactResult } from "../config/index.js";
import type { ConfigIssue } from "../config/types.js";
import { SvcError } from "../shared/svcError.js";
import type { ConfigFileKind, ValidationResult } from "./configAccess.js";
import { ApiError } from "./errors.js";
import { keepHeapFlags } from "../shared/heapFlags.js";

/** What the thread is asked to do. */
export type ConfigJob =
  | { op: "redact"; kind: ConfigFileKind; text: string }
  | { op: "validate"; kind: ConfigFileKind; content: string; path: string }
  | { op: "placeholders"; kind: ConfigFileKind; content: string; current: string | null; file: string };

/** A request as posted to the thread, and its answer. */
export interface ConfigRequest {
  id: number;
  job: ConfigJob;
}
/**
 * A job that threw answers with the error's class and stack frames, never its
 * message: a parser's or a bug's message can quote the text (the secrets
 * too), and the API logs what it gets.
 */
export type ConfigReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; name: string; frames: string };

/** The thread's answer to a job that threw `e` (configThread.ts). */
export function threadFailure(id: number, e: unknown): ConfigReply {
  const name = e instanceof Error ? e.name : typeof e;
  const stack = e instanceof Error && typeof e.stack === "string" ? e.stack : "";
  // The frames only: "    at fn (file:line:col)" lines; the first lines of a stack repeat the message.
  const frames = stack
    .split("\n")
    .filter((l) => /^\s+at /.test(l))
    .join("\n");
  return { id, ok: false, name, frames };
}

/**
 * The thread stops after this long without a request: after a 3 MB svc.yaml
 * its heap holds ~300 MB until then (a new thread starts in ~0.1-0.3 s).
 */
const IDLE_MS = 10_000;
/** The longest a request may wait for the thread's next answer: a 10,000-job svc.yaml takes ~20 s under load. */
const STUCK_MS = 120_000;

export interface ConfigWorkerOptions {
  /** The thread's module (a file URL); default configThread beside this module. */
  entry?: string;
  /** Stop the thread after this long without a request (ms); default 10 s. */
  idleMs?: number;
  /** A thread that holds requests and answers none for this long is ended, and they fail (ms); default 120 s. */
  stuckMs?: number;
}

interface Pending {
  resolve(value: unknown): void;
  reject(e: Error): void;
  /** What was asked, for the error message: never the text itself. */
  what: string;
}

/** The worker failed, not the request: a 500, logged by the API's error handler. */
export class ConfigWorkerError extends SvcError {
  constructor(message: string, cause?: unknown) {
    super("internal", message, cause === undefined ? undefined : { cause });
    this.name = "ConfigWorkerError";
  }
}

export class ConfigWorker {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closed = false;
  private idle: NodeJS.Timeout | null = null;
  private stuck: NodeJS.Timeout | null = null;
  private started = 0;

  constructor(private readonly opts: ConfigWorkerOptions = {}) {}

  /** Requests queued or running. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Threads started so far (a dead or idle one is replaced by the next request). */
  get starts(): number {
    return this.started;
  }

  /** Whether a thread is running now. */
  get running(): boolean {
    return this.worker !== null;
  }

  /** The text with its secrets `"***"`, or its YAML errors (redactText.ts). */
  redact(kind: ConfigFileKind, text: string): Promise<RedactResult> {
    return this.ask({ op: "redact", kind, text }) as Promise<RedactResult>;
  }

  /** The loader's verdict on a text as if it were the file at `path`. */
  validate(kind: ConfigFileKind, content: string, path: string): Promise<ValidationResult> {
    return this.ask({ op: "validate", kind, content, path }) as Promise<ValidationResult>;
  }

  /** `"***"` placeholders written where the file on disk holds a secret (configAccess.ts). */
  placeholders(kind: ConfigFileKind, content: string, current: string | null, file: string): Promise<ConfigIssue[]> {
    return this.ask({ op: "placeholders", kind, content, current, file }) as Promise<ConfigIssue[]>;
  }

  /**
   * Ends the thread for good (the API calls it when the server closes): what
   * it held, and every later request, fail with 409 `conflict` (the daemon is
   * shutting down), like the other requests a stopping daemon refuses.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.stop(shuttingDown());
  }

  private ask(job: ConfigJob): Promise<unknown> {
    if (this.closed) return Promise.reject(shuttingDown());
    let worker: Worker;
    try {
      worker = this.worker ?? this.start();
    } catch (e) {
      return Promise.reject(new ConfigWorkerError(`the config worker could not start: ${message(e)}`, e));
    }
    if (this.idle) {
      clearTimeout(this.idle);
      this.idle = null;
    }
    const id = this.nextId++;
    if (this.pending.size === 0) this.armStuck(worker);
    return new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, what: describe(job) });
      worker.postMessage({ id, job } satisfies ConfigRequest);
    });
  }

  /**
   * A thread that answers nothing for stuckMs while it holds requests (a parse that never ends) would
   * hold every later config view, validation and save: it is ended, what it held fails, and the next
   * request starts a new one. Each answer gives the next request the whole time again.
   */
  private armStuck(w: Worker): void {
    if (this.stuck) clearTimeout(this.stuck);
    const ms = this.opts.stuckMs ?? STUCK_MS;
    this.stuck = setTimeout(() => {
      this.stuck = null;
      if (this.worker !== w || this.pending.size === 0) return;
      const what = this.pending.values().next().value!.what;
      void this.stop(new ConfigWorkerError(`the config worker answered nothing for ${ms / 1000} s (${what}); it was ended, and the next request starts a new one`));
    }, ms);
    this.stuck.unref();
  }

  private start(): Worker {
    const { entry, tsx } = threadModule(this.opts.entry);
    this.started++;
    // `env: SHARE_ENV`: the thread sees the daemon's environment as it is now (`${env:}` references).
    const w = keepHeapFlags(new Worker(THREAD_LOADER, { eval: true, workerData: { entry, tsx }, env: SHARE_ENV }));
    w.unref();
    w.on("message", (reply: ConfigReply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      if (reply.ok) p.resolve(reply.value);
      else {
        const e = new ConfigWorkerError(
          `the config worker failed on ${p.what}: ${reply.name} (its message is not kept: it may quote the config text; the frames below say where)`,
        );
        e.stack = `${e.name}: ${e.message}\n${reply.frames}`;
        p.reject(e);
      }
      if (this.worker !== w) return;
      if (this.pending.size === 0) this.armIdle(w);
      else this.armStuck(w);
    });
    const lost = (why: string, cause?: unknown) => {
      if (this.worker !== w) return;
      this.worker = null;
      this.disarmTimers();
      this.failAll(new ConfigWorkerError(`the config worker stopped (${why}); the next request starts a new one`, cause));
    };
    w.on("error", (e) => lost(e.message, e));
    w.on("exit", (code) => lost(`exit code ${code}`));
    this.worker = w;
    return w;
  }

  private armIdle(w: Worker): void {
    this.disarmTimers();
    this.idle = setTimeout(() => {
      if (this.worker === w && this.pending.size === 0) void this.stop(null);
    }, this.opts.idleMs ?? IDLE_MS);
    this.idle.unref();
  }

  private disarmTimers(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    if (this.stuck) clearTimeout(this.stuck);
    this.stuck = null;
  }

  /** Stops the thread; what it held fails with `e`. */
  private async stop(e: Error | null): Promise<void> {
    const w = this.worker;
    this.worker = null;
    this.disarmTimers();
    if (e) this.failAll(e);
    if (w) await w.terminate();
  }

  private failAll(e: Error): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(e);
  }
}

/**
 * A config file's redacted text, or its YAML errors, by the worker. The last
 * answer per file is kept (the text changes rarely; a 10,000-job svc.yaml
 * costs seconds to redact): a request for the same text gets it, or waits for
 * the one being computed. A failed request is not kept.
 */
export class RedactedTexts {
  private readonly last = new Map<ConfigFileKind, { text: string; result: Promise<RedactResult> }>();

  constructor(private readonly worker: ConfigWorker) {}

  of(kind: ConfigFileKind, text: string): Promise<RedactResult> {
    const hit = this.last.get(kind);
    if (hit && hit.text === text) return hit.result;
    const entry = { text, result: this.worker.redact(kind, text) };
    this.last.set(kind, entry);
    entry.result.catch(() => {
      if (this.last.get(kind) === entry) this.last.delete(kind);
    });
    return entry.result;
  }
}

/**
 * Runs in the thread: tsx's loader first when the module is TypeScript
 * (tests), then the module, which answers on parentPort. A failure to load
 * is thrown out of the thread: its `error` event.
 */
const THREAD_LOADER = `
const { workerData } = require("node:worker_threads");
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})().catch((e) => setImmediate(() => { throw e; }));
`;

function threadModule(entry: string | undefined): { entry: string; tsx: string | null } {
  const here = import.meta.url;
  const ext = /\.(m?js|ts)$/.exec(here)?.[1] ?? "js";
  const file = entry ?? new URL(`./configThread.${ext}`, here).href;
  return { entry: file, tsx: file.endsWith(".ts") ? tsxLoader() : null };
}

/**
 * tsx's ESM API (its `register()` installs the TypeScript loader in the
 * thread). Only for tests, which run src/ as TypeScript; tsx is a dev
 * dependency. Its CommonJS entry cannot register from a worker, hence the
 * .mjs beside it.
 */
function tsxLoader(): string {
  const cjs = createRequire(import.meta.url).resolve("tsx/esm/api");
  return pathToFileURL(cjs.replace(/\.c?js$/, ".mjs")).href;
}

function shuttingDown(): ApiError {
  return new ApiError("conflict", "the daemon is shutting down: the config text was not parsed; ask again once svcd runs");
}

/** A job as the error messages name it: the operation, the file and the text's size, never the text. */
function describe(job: ConfigJob): string {
  const text = job.op === "redact" ? job.text : job.content;
  return `${job.op} of a ${job.kind} text (${text.length.toLocaleString("en")} characters)`;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
