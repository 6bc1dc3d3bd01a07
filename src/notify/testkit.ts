/**
 * Fixtures for notify tests: config objects built the way the loader builds
 * them, and local peers (an HTTP receiver, an SMTP server) on 127.0.0.1:0.
 * Not exported from index.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import type { IntegrationConfig, JobConfig, NotifyEntry, ProjectConfig } from "../config/types.js";
import type { RunRecord } from "../store/types.js";

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
    ...more,
  };
}

export function project(jobs: JobConfig[], integrations: IntegrationConfig[]): ProjectConfig {
  return {
    file: "/tmp/svc.yaml",
    dir: "/tmp",
    jobs: new Map(jobs.map((j) => [j.name, j])),
    integrations: new Map(integrations.map((i) => [i.name, i])),
    dotenv: {},
    warnings: [],
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
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
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
