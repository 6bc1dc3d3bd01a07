/**
 * JSON requests to the daemon over the Unix socket or HTTP(S) (CONTRACT §1,
 * §4). Every failure becomes a one-line CliError: API errors keep the
 * daemon's message; 401 says how to set SVC_TOKEN; transport failures name
 * the daemon. Each request has a timeout (SVC_TIMEOUT seconds, default 30).
 */
import { createWriteStream, readFileSync, renameSync, rmSync } from "node:fs";
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import type * as Https from "node:https";
import { CliError } from "../output.js";
import { ApiError, timeoutError, transportError, unauthorized } from "./errors.js";
import type { HttpTarget, Target } from "./target.js";

export const DEFAULT_TIMEOUT_MS = 30_000;

export type Query = Record<string, string | number | boolean | string[] | undefined | null>;

export interface RawResponse<T = unknown> {
  status: number;
  body: T;
}

type TlsOptions = { ca?: Buffer; cert?: Buffer; key?: Buffer };

export class DaemonClient {
  private agent: HttpAgent | null = null;
  private connect: { headers: Record<string, string>; tls: TlsOptions } | null = null;

  constructor(
    readonly target: Target,
    readonly timeoutMs: number = DEFAULT_TIMEOUT_MS,
    /** `-v`: told each request with its status and time. */
    private readonly trace?: (line: string) => void,
  ) {}

  get<T>(path: string, query?: Query): Promise<T> {
    return this.json<T>("GET", withQuery(path, query));
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.json<T>("POST", path, body);
  }

  /** The answer whatever its status (401 and transport failures still throw). */
  async raw<T = unknown>(method: string, path: string, body?: unknown): Promise<RawResponse<T>> {
    return this.send<T>(method, path, body);
  }

  private async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.send<unknown>(method, path, body);
    if (res.status >= 400) throw apiError(res, `${method} ${path}`);
    return res.body as T;
  }

  /**
   * A request whose 200 answer is a file: streamed to `dest` (written as
   * `<dest>.partial`, then renamed). Any other answer is an error, as `post`.
   */
  async download(method: string, path: string, dest: string): Promise<{ bytes: number; headers: IncomingMessage["headers"] }> {
    const { headers, tls } = this.connectOptions();
    const t = this.target;
    const https = t.kind === "http" && t.url.protocol === "https:";
    const httpsModule = https ? await import("node:https") : null;
    const opts: RequestOptions = {
      method,
      headers: { ...headers, accept: "application/vnd.sqlite3, application/json" },
      agent: this.agentFor(httpsModule, tls),
      ...(t.kind === "unix"
        ? { socketPath: t.socketPath, path }
        : { host: t.url.hostname.replace(/^\[|\]$/g, ""), port: t.url.port || (https ? 443 : 80), path: joinPath(t, path) }),
    };
    const what = `${method} ${path}`;
    const partial = `${dest}.partial`;
    return new Promise((resolve, reject) => {
      const fail = (e: unknown) => {
        rmSync(partial, { force: true });
        reject(e instanceof CliError ? e : transportError(t, e, what));
      };
      const req = (httpsModule ? httpsModule.request : httpRequest)(opts, (res) => {
        if (res.statusCode !== 200) {
          readBody(res).then((text) => {
            if (res.statusCode === 401) return reject(unauthorized(t));
            reject(apiError({ status: res.statusCode ?? 0, body: parseBody(text, res) }, what));
          }, fail);
          return;
        }
        const out = createWriteStream(partial, { mode: 0o600 });
        let bytes = 0;
        res.on("data", (c: Buffer) => (bytes += c.length));
        res.on("aborted", () => fail(Object.assign(new Error("aborted"), { code: "ECONNRESET" })));
        out.on("error", (e) => fail(new CliError(`cannot write ${dest}: ${(e as NodeJS.ErrnoException).code ?? e.message}`)));
        out.on("finish", () => {
          try {
            renameSync(partial, dest);
          } catch (e) {
            return fail(new CliError(`cannot write ${dest}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`));
          }
          resolve({ bytes, headers: res.headers });
        });
        res.pipe(out);
      });
      req.setTimeout(this.timeoutMs, () => req.destroy(timeoutError(t, what, this.timeoutMs)));
      req.on("error", fail);
      req.end();
    });
  }

  /** Headers and TLS options shared with the WebSocket (logSocket.ts). */
  connectOptions(): { headers: Record<string, string>; tls: TlsOptions } {
    if (this.connect) return { headers: { ...this.connect.headers }, tls: this.connect.tls };
    const headers: Record<string, string> = { host: this.target.kind === "unix" ? "svc" : this.target.url.host };
    if (this.target.kind === "http") {
      const t = this.target;
      if (t.token !== null) headers.authorization = `Bearer ${t.token}`;
      else if (t.url.username) {
        const user = decodeURIComponent(t.url.username);
        const pass = decodeURIComponent(t.url.password);
        headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;
      }
    }
    this.connect = { headers, tls: this.target.kind === "http" ? readTls(this.target) : {} };
    return { headers: { ...headers }, tls: this.connect.tls };
  }

  /** Frees kept-alive connections (they never hold the process open anyway). */
  close(): void {
    this.agent?.destroy();
    this.agent = null;
  }

  private async send<T>(method: string, path: string, body?: unknown): Promise<RawResponse<T>> {
    const what = `${method} ${path.replace(/\?.*$/, "")}`;
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const { headers, tls } = this.connectOptions();
    headers.accept = "application/json";
    if (data) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(data.length);
    }
    const t = this.target;
    const https = t.kind === "http" && t.url.protocol === "https:";
    // node:https (and TLS) is loaded only for https targets: most calls use the socket.
    const httpsModule = https ? await import("node:https") : null;
    const opts: RequestOptions = {
      method,
      headers,
      agent: this.agentFor(httpsModule, tls),
      ...(t.kind === "unix"
        ? { socketPath: t.socketPath, path }
        : { host: t.url.hostname.replace(/^\[|\]$/g, ""), port: t.url.port || (https ? 443 : 80), path: joinPath(t, path) }),
    };
    const began = performance.now();
    return new Promise((resolve, reject) => {
      const fail = (e: unknown) => reject(e instanceof CliError ? e : transportError(t, e, what));
      const req = (httpsModule ? httpsModule.request : httpRequest)(opts, (res) => {
        readBody(res).then((text) => {
          this.trace?.(`${method} ${path} -> ${res.statusCode ?? "?"} (${Math.round(performance.now() - began)} ms)`);
          if (res.statusCode === 401) return reject(unauthorized(t));
          resolve({ status: res.statusCode ?? 0, body: parseBody(text, res) as T });
        }, fail);
      });
      req.setTimeout(this.timeoutMs, () => req.destroy(timeoutError(t, what, this.timeoutMs)));
      req.on("error", fail);
      req.end(data);
    });
  }

  private agentFor(https: typeof Https | null, tls: TlsOptions): HttpAgent {
    if (!this.agent) this.agent = https ? new https.Agent({ keepAlive: true, ...tls }) : new HttpAgent({ keepAlive: true });
    return this.agent;
  }
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    res.on("aborted", () => reject(Object.assign(new Error("aborted"), { code: "ECONNRESET" })));
    res.on("error", reject);
  });
}

function parseBody(text: string, res: IncomingMessage): unknown {
  if (text === "") return null;
  if (!/json/i.test(String(res.headers["content-type"] ?? "")) && !/^\s*[{[]/.test(text)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `{error: {code, message, details}}` as an ApiError; anything else says what came back. */
export function apiError(res: RawResponse, what: string): ApiError {
  const e = (res.body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  if (e && typeof e.message === "string") {
    return new ApiError(e.message, res.status, typeof e.code === "string" ? e.code : "error", e.details ?? null);
  }
  const text = typeof res.body === "string" ? res.body.replace(/\s+/g, " ").slice(0, 200) : JSON.stringify(res.body);
  return new ApiError(`unexpected answer from the daemon to ${what}: HTTP ${res.status}${text ? ` ${text}` : ""}`, res.status, "http_error");
}

function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (Array.isArray(v)) for (const item of v) params.append(k, item);
    else if (v !== undefined && v !== null && v !== "") params.set(k, String(v));
  }
  const qs = params.toString();
  return qs === "" ? path : `${path}?${qs}`;
}

/** `/api/jobs` under the URL's base path (`api.base_path`). */
export function joinPath(t: HttpTarget, path: string): string {
  return t.url.pathname.replace(/\/$/, "") + path;
}

function readTls(t: HttpTarget): TlsOptions {
  const read = (envName: string, path: string | null): Buffer | undefined => {
    if (path === null) return undefined;
    try {
      return readFileSync(path);
    } catch (e) {
      throw new CliError(`${envName}=${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? "error"})`);
    }
  };
  const out: TlsOptions = {};
  const ca = read("SVC_CACERT", t.tls.ca);
  const cert = read("SVC_CLIENT_CERT", t.tls.cert);
  const key = read("SVC_CLIENT_KEY", t.tls.key);
  if (ca) out.ca = ca;
  if (cert) out.cert = cert;
  if (key) out.key = key;
  if ((cert === undefined) !== (key === undefined)) throw new CliError("SVC_CLIENT_CERT and SVC_CLIENT_KEY go together: set both for mutual TLS, or neither");
  return out;
}

/** SVC_TIMEOUT (seconds) or the default. */
export function timeoutFromEnv(env: NodeJS.ProcessEnv): number {
  const s = Number(env.SVC_TIMEOUT);
  return Number.isFinite(s) && s > 0 ? s * 1000 : DEFAULT_TIMEOUT_MS;
}
