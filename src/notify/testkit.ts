/**
 * Fixtures for notify tests: config objects built the way the loader builds
 * them, and local peers (an HTTP receiver, an SMTP server) on 127.0.0.1:0.
 * Not exported from index.ts.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { SMTPServer } from "smtp-server";
import type { IntegrationConfig, JobConfig, NotifyEntry, ProjectConfig } from "../config/types.js";
import { EventBus, type EngineEvents } from "../engine/events.js";
import { DepGraph } from "../graph/depGraph.js";
import { memoryLogger } from "../shared/logger.js";
import type { Store } from "../store/api.js";
import { openStore } from "../store/index.js";
import type { AlertRow, LogStream, RunRecord } from "../store/types.js";
import { createNotifier, type Notifier, type NotifierDeps } from "./notifier.js";

export function integration(name: string, fields: Partial<IntegrationConfig> & Pick<IntegrationConfig, "provider">): IntegrationConfig {
  return {
    name,
    webhookUrl: null,
    routingKey: null,
    host: null,
    from: null,
    port: null,
    username: null,
    password: null,
    credentialStatus: "configured",
    unsetVars: [],
    ...fields,
  };
}

export function entry(channel: string, more: Partial<NotifyEntry> = {}): NotifyEntry {
  return { channel, message: null, attachLogs: null, onlyAfterFailure: false, ...more };
}

export function job(name: string, more: Partial<JobConfig> = {}): JobConfig {
  return {
    name,
    command: "true",
    description: null,
    schedule: { frequency: "manual", time: null, weekday: null, dayOfMonth: null, timezone: "UTC" },
    after: null,
    dependsOn: [],
    upstreams: [],
    dependencyTriggered: false,
    timeoutMs: null,
    slaMs: null,
    tags: [],
    onFailure: "alert",
    retries: 0,
    retryDelay: { kind: "exponential" },
    concurrency: "forbid",
    catchup: false,
    env: {},
    healthcheck: null,
    output: {},
    notify: {},
    params: {},
    ...more,
  };
}

export function project(jobs: JobConfig[], integrations: IntegrationConfig[]): ProjectConfig {
  return {
    file: "/tmp/svc.yaml",
    dir: "/tmp",
    jobs: new Map(jobs.map((j) => [j.name, j])),
    integrations: new Map(integrations.map((i) => [i.name, i])),
    graph: new DepGraph(jobs),
    defaultTimezone: "UTC",
    dotenv: {},
    warnings: [],
    exposedSecrets: [],
  };
}

export function run(more: Partial<RunRecord> = {}): RunRecord {
  return {
    id: 7,
    job_name: "backup",
    status: "FAILED",
    attempt: 2,
    trigger: "schedule",
    triggered_by: "scheduler",
    reason: null,
    cycle_id: "0b8e3c8a-5d7e-4c1e-9a47-3f1f0c7b2d11",
    tags: [],
    scheduled_for: null,
    params: {},
    scheduled_at: null,
    backfill_id: null,
    created_at: "2026-11-21T10:00:00.000Z",
    started_at: "2026-11-21T10:00:00.000Z",
    finished_at: "2026-11-21T10:01:05.000Z",
    exit_code: 3,
    sla_breached: 0,
    hc_status: null,
    pid: null,
    pid_start: null,
    error: null,
    duration_ms: 65_000,
    next_attempt_at: null,
    ...more,
  };
}

export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: unknown;
  at: number;
}

/** What the receiver answers: status + body, or "hang" (never answers). */
export type Reply = { status: number; body?: unknown; delayMs?: number } | "hang";

/** An HTTP receiver on 127.0.0.1:0 that records every request and answers from a script. */
export interface Receiver {
  url: string;
  received: Received[];
  /** Replies for the next requests in order; afterwards `fallback`. */
  script: Reply[];
  fallback: Reply;
  close(): Promise<void>;
}

export async function startReceiver(fallback: Reply = { status: 200, body: { ok: true } }): Promise<Receiver> {
  const received: Received[] = [];
  const hung: ServerResponse[] = [];
  const r: Receiver = {
    url: "",
    received,
    script: [],
    fallback,
    close: async () => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep text
      }
      received.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, at: Date.now() });
      const reply = r.script.shift() ?? r.fallback;
      if (reply === "hang") {
        hung.push(res);
        return;
      }
      const send = () => {
        res.writeHead(reply.status, { "content-type": "application/json" });
        res.end(JSON.stringify(reply.body ?? {}));
      };
      if (reply.delayMs) {
        const t = setTimeout(send, reply.delayMs);
        res.on("close", () => clearTimeout(t));
      } else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return r;
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  auth: { username: string; password: string } | null;
  secure: boolean;
}

export interface MailServer {
  port: number;
  mails: ReceivedMail[];
  close(): Promise<void>;
}

/**
 * A real SMTP server (smtp-server) on 127.0.0.1:0 with AUTH PLAIN/LOGIN.
 * `starttls: false` hides STARTTLS so that plain AUTH works without a
 * certificate (allowInsecureAuth).
 */
export async function startMailServer(opts: { user: string; pass: string; starttls?: boolean }): Promise<MailServer> {
  const mails: ReceivedMail[] = [];
  const auths = new Map<string, { username: string; password: string }>();
  const server = new SMTPServer({
    authMethods: ["PLAIN", "LOGIN"],
    allowInsecureAuth: true,
    disabledCommands: opts.starttls ? [] : ["STARTTLS"],
    logger: false,
    onAuth(auth, session, cb) {
      if (auth.username === opts.user && auth.password === opts.pass) {
        auths.set(session.id, { username: auth.username ?? "", password: auth.password ?? "" });
        cb(null, { user: auth.username });
      } else {
        cb(new Error("Invalid username or password"));
      }
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((a) => a.address),
          raw: Buffer.concat(chunks).toString("utf8"),
          auth: auths.get(session.id) ?? null,
          secure: session.secure,
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Polls `cond` every 10 ms; throws after `timeoutMs`. */
export async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface HarnessOptions {
  jobs?: JobConfig[];
  integrations?: IntegrationConfig[];
  /** A loaded project instead of `jobs` + `integrations`. */
  project?: ProjectConfig;
  /** Reopen an existing database file (restart tests); default: a new temp dir. */
  dbPath?: string;
  /** Overrides of the notifier deps; `sleep` defaults to a recorder that does not wait. */
  notifier?: Partial<NotifierDeps>;
}

type NotifyEv = EngineEvents["run:notify"];

/** A started notifier on a real SQLite store in a temp directory. */
export interface Harness {
  store: Store;
  bus: EventBus;
  log: ReturnType<typeof memoryLogger>;
  notifier: Notifier;
  project: ProjectConfig;
  dbPath: string;
  /** Backoff waits asked for (ms), in order. */
  sleeps: number[];
  /** Creates a run row and returns it as the engine would report it (status etc. from `more`). */
  newRun(jobName: string, more?: Partial<RunRecord>): RunRecord;
  /** Appends log lines to a run and flushes them. */
  logLines(runId: number, lines: string[], stream?: LogStream): void;
  /** Emits `run:notify` and waits until every resulting delivery has finished. */
  emit(event: NotifyEv["event"], run: RunRecord, more?: Partial<NotifyEv>): Promise<void>;
  /** Emits `run:notify` and returns at once. */
  emitOnly(event: NotifyEv["event"], run: RunRecord, more?: Partial<NotifyEv>): void;
  /** Every alert row, oldest first. */
  alerts(): AlertRow[];
  /** Stops the notifier, closes the store and (unless keepFiles) removes the temp dir. */
  close(opts?: { keepFiles?: boolean }): Promise<void>;
}

export async function harness(opts: HarnessOptions): Promise<Harness> {
  const dbPath = opts.dbPath ?? join(mkdtempSync(join(tmpdir(), "svc-notify-")), "svc.db");
  const store = openStore({ path: dbPath, busyTimeoutMs: 5000, walAutocheckpoint: 1000, logFlushMs: 1 });
  const log = memoryLogger();
  const bus = new EventBus(log);
  const proj = opts.project ?? project(opts.jobs ?? [], opts.integrations ?? []);
  const sleeps: number[] = [];
  const notifier = createNotifier({
    bus,
    store,
    getProject: () => proj,
    log,
    httpTimeoutMs: 2000,
    stopTimeoutMs: 2000,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...opts.notifier,
  });
  notifier.start();
  let seq = 0;
  const emitOnly = (event: NotifyEv["event"], r: RunRecord, more: Partial<NotifyEv> = {}) =>
    bus.emit("run:notify", { event, run: r, fallbackToFailure: false, previousStatus: null, ...more });
  return {
    store,
    bus,
    log,
    notifier,
    project: proj,
    dbPath,
    sleeps,
    newRun(jobName, more = {}) {
      const created = store.runs.create({
        job_name: jobName,
        trigger: "schedule",
        triggered_by: "scheduler",
        cycle_id: randomUUID(),
        tags: [],
        created_at: new Date(Date.UTC(2026, 10, 21, 10, 0, 0) + seq++ * 1000).toISOString(),
      });
      return run({ ...created, ...runDefaults(created), ...more, id: created.id, job_name: jobName });
    },
    logLines(runId, lines, stream = "stdout") {
      for (const line of lines) store.logs.append(runId, stream, line, new Date().toISOString());
      store.logs.flush();
    },
    async emit(event, r, more) {
      emitOnly(event, r, more);
      await notifier.idle();
    },
    emitOnly,
    alerts() {
      return store.alerts.search({}, 10_000, 0).rows.sort((a, b) => a.id - b.id);
    },
    async close(closeOpts = {}) {
      await notifier.stop();
      store.close();
      if (!closeOpts.keepFiles) rmSync(dirname(dbPath), { recursive: true, force: true });
    },
  };
}

/** A finished-looking run: the fixture's timestamps and counters, the row's identity. */
function runDefaults(created: RunRecord): Partial<RunRecord> {
  const r = run();
  return {
    status: r.status,
    attempt: r.attempt,
    started_at: r.started_at,
    finished_at: r.finished_at,
    exit_code: r.exit_code,
    duration_ms: r.duration_ms,
    cycle_id: created.cycle_id,
  };
}
