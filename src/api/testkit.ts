/**
 * Fixtures for API tests: the real thing in-process. A temp project with a
 * real svc.yaml read by the real loader, a real SQLite store, a real Engine
 * running real subprocesses, a real notifier, `buildApi`, and a listening
 * server on 127.0.0.1:0. Only the logger is an in-memory one. Not exported
 * from index.ts.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { AddressInfo } from "node:net";
import { Ajv } from "ajv";
import type { FastifyInstance } from "fastify";
import WebSocket from "ws";
import { loadProject, parseDaemonText } from "../config/index.js";
import type { DaemonConfig } from "../config/types.js";
import { Engine } from "../engine/engine.js";
import { EventBus, type EventName } from "../engine/events.js";
import { createNotifier, type Notifier } from "../notify/index.js";
import { systemClock } from "../shared/clock.js";
import { memoryLogger } from "../shared/logger.js";
import { openStore } from "../store/index.js";
import type { Store } from "../store/api.js";
import type { RunRecord, RunStatus } from "../store/types.js";
import { until } from "../../test/helpers/until.js";
import type { ApiDeps, ReloadResult } from "./deps.js";
import { errorResponseSchema } from "./errors.js";
import { Authenticator } from "./auth/authenticator.js";
import { buildApi, type ApiOptions } from "./index.js";
import { createMetrics } from "./metrics.js";

export interface ApiKitOptions extends ApiOptions {
  /** svcd.yaml text; written beside svc.yaml when given. */
  daemon?: string;
  /** Extra files in the project directory (path -> content), made executable. */
  files?: Record<string, string>;
  /** The dashboard build directory; default a fresh empty one (no build). */
  webRoot?: string;
}

export type ApiKit = Awaited<ReturnType<typeof apiKit>>;

/** Whatever a JSON document holds (JSON.parse's own type): tests read answers field by field. */
export type Json = ReturnType<typeof JSON.parse>;

export interface HttpResult<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

function loadOrThrow(file: string) {
  const loaded = loadProject(file);
  if (!loaded.ok) throw new Error(loaded.errors.map((e) => `${e.line}:${e.column} ${e.path} ${e.message}`).join("\n"));
  return loaded.value;
}

function daemonOrThrow(text: string, file: string): DaemonConfig {
  const parsed = parseDaemonText(text, file);
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join("\n"));
  return parsed.value;
}

export type RoleKit<R extends string> = ApiKit & {
  /** A request with `role`'s bearer token. */
  as(role: R, method: string, path: string, body?: unknown): Promise<HttpResult<Json>>;
};

/**
 * An apiKit with bearer auth on and one token per role: `tokens` (role ->
 * token) is written to the file `tokens`, which `daemon` (svcd.yaml text)
 * names as `auth.bearer.token_file: tokens`. The kit checks answers against
 * /api/openapi.json, which it fetches once without credentials, so auth is
 * turned on after a first request.
 */
export async function roleKit<R extends string>(yaml: string, daemon: string, tokens: Record<R, string>): Promise<RoleKit<R>> {
  const auth = new Authenticator(memoryLogger());
  const lines = Object.entries<string>(tokens).map(([role, token]) => `${token} ${role}\n`);
  const k = await apiKit(yaml, { daemon, auth, files: { tokens: lines.join("") } });
  await k.get("/api/status");
  const r = auth.configure(k.deps.daemonConfig().auth);
  if (!r.ok) throw new Error(r.error);
  return Object.assign(k, {
    as: (role: R, method: string, path: string, body?: unknown) =>
      k.request(method, path, { headers: { authorization: `Bearer ${tokens[role]}` }, ...(body === undefined ? {} : { body }) }),
  });
}

export async function apiKit(yaml: string, opts: ApiKitOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), "svc-api-"));
  for (const [path, content] of Object.entries(opts.files ?? {})) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content, { mode: 0o755 });
  }
  const configPath = join(dir, "svc.yaml");
  writeFileSync(configPath, yaml);
  const daemonPath = opts.daemon === undefined ? null : join(dir, "svcd.yaml");
  if (daemonPath) writeFileSync(daemonPath, opts.daemon!);
  let project = loadOrThrow(configPath);
  let daemon = daemonOrThrow(opts.daemon ?? "", daemonPath ?? join(dir, "svcd.yaml"));

  const log = memoryLogger();
  const dataDir = join(dir, ".svc");
  const dbPath = join(dataDir, "svc.db");
  const store: Store = openStore({ path: dbPath, busyTimeoutMs: 5000, walAutocheckpoint: 1000 });
  const bus = new EventBus(log);
  const unbridge = store.logs.onFlushed((lines) => bus.emit("run:logs", { lines }));
  const notifier: Notifier = createNotifier({ bus, store, getProject: () => project, log, sleep: async () => {} });
  notifier.start();
  const engine = new Engine({ store, bus, log, clock: systemClock, project, daemon });
  const metrics = daemon.metrics.enabled
    ? createMetrics({ bus, store, engine, project: () => project, databasePath: dbPath, version: "0.1.0-test" })
    : null;
  await engine.start();

  const stops: { force: boolean }[] = [];
  const reload = async (): Promise<ReloadResult> => {
    const p = loadProject(configPath);
    const dtext = daemonPath && existsSync(daemonPath) ? readFileSync(daemonPath, "utf8") : "";
    const d = parseDaemonText(dtext, daemonPath ?? join(dir, "svcd.yaml"));
    const errors = [...(p.ok ? [] : p.errors), ...(d.ok ? [] : d.errors)];
    metrics?.reloaded(p.ok && d.ok);
    if (!p.ok || !d.ok) return { ok: false, errors };
    project = p.value;
    daemon = d.value;
    engine.reload(project);
    notifier.syncIntegrations(project);
    return { ok: true, jobs: project.jobs.size };
  };

  const webRoot = opts.webRoot ?? join(dir, "no-web-build");
  const deps: ApiDeps = {
    engine,
    store,
    bus,
    notifier,
    metrics,
    log,
    version: "0.1.0-test",
    startedAt: Date.now() - 5_000,
    pid: process.pid,
    project: () => project,
    daemonConfig: () => daemon,
    paths: { config: configPath, daemonConfig: daemonPath, database: dbPath, dataDir, webRoot },
    reload,
    stop: (o) => void stops.push(o),
  };
  const app: FastifyInstance = await buildApi(deps, opts);
  await app.listen({ host: "127.0.0.1", port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;
  const sockets = new Set<WebSocket>();
  let checker: ShapeChecker | null = null;
  /** `METHOD /template` of every success answer checked against its schema. */
  const checked = new Set<string>();

  const kit = {
    dir,
    app,
    deps,
    engine,
    store,
    bus,
    log,
    notifier,
    stops,
    base,
    port,
    wsBase: `ws://127.0.0.1:${port}`,
    configPath,
    daemonPath,
    checked,

    async request<T = Json>(method: string, path: string, init: { body?: unknown; raw?: string | Buffer; headers?: Record<string, string> } = {}): Promise<HttpResult<T>> {
      const headers: Record<string, string> = { ...init.headers };
      let body: string | Buffer | undefined;
      if (init.raw !== undefined) body = init.raw;
      else if (init.body !== undefined) {
        body = JSON.stringify(init.body);
        headers["content-type"] ??= "application/json";
      }
      const res = await fetch(base + path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      const json = (res.headers.get("content-type") ?? "").includes("application/json");
      if (json && text !== "") parsed = JSON.parse(text);
      // Every JSON answer must match the schema the OpenAPI document gives for it.
      if (json) {
        checker ??= new ShapeChecker((await (await fetch(`${base}/api/openapi.json`)).json()) as object);
        const template = checker.check(method, path, res.status, parsed);
        checked.add(`${method} ${template}`);
      }
      return { status: res.status, headers: res.headers, body: parsed as T, text };
    },
    get<T = Json>(path: string) {
      return kit.request<T>("GET", path);
    },
    post<T = Json>(path: string, body?: unknown) {
      return kit.request<T>("POST", path, body === undefined ? {} : { body });
    },

    /** Polls until `pred` holds, failing after `ms`. */
    waitFor<T>(what: string, pred: () => T | null | undefined | false, ms = 15_000): Promise<T> {
      return until(what, pred, ms, 20);
    },
    async waitRun(id: number, statuses: RunStatus[], ms = 15_000): Promise<RunRecord> {
      return kit.waitFor(`run ${id} to be ${statuses.join("|")}`, () => {
        const r = store.runs.get(id);
        return r && statuses.includes(r.status) ? r : null;
      }, ms);
    },
    /** Starts a manual run through the API and returns its id. */
    async run(job: string, reason?: string): Promise<number> {
      const res = await kit.post<{ run_id: number }>(`/api/jobs/${job}/run`, reason === undefined ? undefined : { reason });
      if (res.status !== 202) throw new Error(`run ${job}: ${res.status} ${res.text}`);
      return res.body.run_id;
    },

    /** A WebSocket client on /ws/logs/:id that records every frame and the close. */
    logClient(runId: number | string, wsOpts: WebSocket.ClientOptions = {}) {
      const socket = new WebSocket(`${kit.wsBase}/ws/logs/${runId}`, wsOpts);
      sockets.add(socket);
      const frames: Json[] = [];
      let resolveClose!: (c: { code: number; reason: string }) => void;
      const closed = new Promise<{ code: number; reason: string }>((r) => (resolveClose = r));
      let unexpected: Error | null = null;
      socket.on("message", (data) => frames.push(JSON.parse(String(data))));
      socket.on("close", (code, reason) => resolveClose({ code, reason: reason.toString() }));
      socket.on("unexpected-response", (_req, res) => {
        unexpected = new Error(`HTTP ${res.statusCode}`);
        resolveClose({ code: -res.statusCode!, reason: "unexpected response" });
      });
      socket.on("error", () => undefined);
      const opened = new Promise<void>((resolve) => {
        socket.once("open", () => resolve());
        void closed.then(() => resolve());
      });
      return {
        socket,
        frames,
        closed,
        opened,
        get error() {
          return unexpected;
        },
        lines: () => frames.filter((f) => f.type === "line"),
        seqs: () => frames.filter((f) => f.type === "line").map((f) => f.seq as number),
      };
    },

    /** How many listeners the bus holds for an event (the listener-leak check). */
    listenerCount(name: EventName): number {
      return (bus as unknown as { listeners: Map<EventName, Set<unknown>> }).listeners.get(name)?.size ?? 0;
    },

    writeConfig(text: string): void {
      writeFileSync(configPath, text);
    },

    async close(): Promise<void> {
      for (const s of sockets) s.terminate();
      await app.close();
      await engine.stop({ force: true });
      await notifier.stop();
      metrics?.close();
      unbridge();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return kit;
}

// ---- response shape checks against the OpenAPI document ----

/**
 * Validates answers against the OpenAPI document the API itself publishes,
 * so docs and behaviour cannot drift: the route is found by matching the
 * path against the document's templates.
 */
export class ShapeChecker {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly routes: { method: string; re: RegExp; template: string; op: Json }[] = [];
  private readonly error = this.ajv.compile(errorResponseSchema);
  private readonly compiled = new Map<string, ReturnType<Ajv["compile"]>>();

  constructor(doc: Json) {
    for (const [template, ops] of Object.entries<Json>(doc.paths)) {
      const re = new RegExp(`^${template.replace(/[.]/g, "\\.").replace(/\{[^}]+\}/g, "[^/]+")}$`);
      for (const [method, op] of Object.entries(ops)) this.routes.push({ method: method.toUpperCase(), re, template, op });
    }
    // Static templates before parameterised ones (`/api/jobs/pause` before `/api/jobs/{name}`).
    this.routes.sort((a, b) => Number(a.template.includes("{")) - Number(b.template.includes("{")));
  }

  /** Throws when the answer does not match its documented schema; returns the template it matched. */
  check(method: string, path: string, status: number, body: unknown): string {
    const pathname = path.split("?")[0]!;
    if (status >= 400) {
      if (!this.error(body)) throw new Error(`${method} ${path} ${status}: not the error shape: ${JSON.stringify(body)}`);
      return "error";
    }
    const route = this.routes.find((r) => r.method === method && r.re.test(pathname));
    if (!route) throw new Error(`undocumented route ${method} ${pathname}`);
    const schema = route.op.responses?.[String(status)]?.content?.["application/json"]?.schema;
    if (!schema) throw new Error(`${method} ${route.template}: status ${status} is not documented`);
    const key = `${method} ${route.template} ${status}`;
    let validate = this.compiled.get(key);
    if (!validate) this.compiled.set(key, (validate = this.ajv.compile(schema)));
    if (!validate(body)) {
      throw new Error(`${method} ${path} ${status} does not match its schema: ${this.ajv.errorsText(validate.errors)}`);
    }
    return route.template;
  }
}
