/**
 * Helpers for the security e2e tests (test/e2e/security-*.test.ts): raw
 * HTTP(S) calls that keep every header, WebSocket attempts that report the
 * refusal status, certificates made with openssl, and Basic headers.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import WebSocket from "ws";

/** Whatever a JSON document holds (JSON.parse's own type): tests read answers field by field. */
export type Json = ReturnType<typeof JSON.parse>;

export interface Target {
  host: string;
  port: number;
  https?: boolean;
}

export interface TlsClient {
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  minVersion?: "TLSv1.2" | "TLSv1.3";
  maxVersion?: "TLSv1.2" | "TLSv1.3";
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body, or null when it is not JSON. */
  json: Json;
}

export interface CallOptions {
  headers?: Record<string, string>;
  body?: unknown;
  tls?: TlsClient;
  /** Source address of the connection (any 127.x.y.z on Linux loopback). */
  localAddress?: string;
  timeoutMs?: number;
}

/** `host:port` (as in api.addr) -> Target. */
export function target(addr: string, https = false): Target {
  const i = addr.lastIndexOf(":");
  return { host: addr.slice(0, i).replace(/^\[|\]$/g, ""), port: Number(addr.slice(i + 1)), https };
}

/** One request on a fresh connection; resolves with whatever status came back, rejects on a transport error. */
export function call(t: Target, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const data = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const headers: Record<string, string> = {
      ...(data ? { "content-type": "application/json", "content-length": String(data.length) } : {}),
      ...opts.headers,
    };
    const common = { host: t.host, port: t.port, method, path, headers, agent: false as const, localAddress: opts.localAddress };
    const onRes = (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on("error", reject);
    };
    const req = t.https ? httpsRequest({ ...common, ...opts.tls, servername: undefined }, onRes) : httpRequest(common, onRes);
    req.setTimeout(opts.timeoutMs ?? 15_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on("error", reject);
    if (data) req.write(data);
    req.end();
  });
}

export type WsAttempt =
  | { ok: true; ws: WebSocket; protocol: string; frames: () => Json[]; closed: Promise<number> }
  | { ok: false; status: number; headers: IncomingHttpHeaders; text: string };

/** Opens a WebSocket; a refused upgrade resolves with its HTTP status instead of throwing. */
export function wsOpen(url: string, opts: { headers?: Record<string, string>; protocols?: string[]; tls?: TlsClient } = {}): Promise<WsAttempt> {
  return new Promise((resolve, reject) => {
    const frames: Json[] = [];
    const ws = new WebSocket(url, opts.protocols ?? [], { headers: opts.headers, ...opts.tls, handshakeTimeout: 10_000 });
    const closedCode = new Promise<number>((r) => ws.once("close", (code) => r(code)));
    ws.on("message", (d) => frames.push(JSON.parse(d.toString())));
    ws.once("open", () => resolve({ ok: true, ws, protocol: ws.protocol, frames: () => frames, closed: closedCode }));
    ws.once("unexpected-response", (req, res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        req.destroy();
        resolve({ ok: false, status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") });
      });
    });
    ws.once("error", (e) => reject(e));
  });
}

export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
export const bearer = (token: string) => `Bearer ${token}`;

/** The principal name of a bearer token (docs/SECURITY.md): `token:` + 8 hex digits of its SHA-256. */
export const tokenLabel = (token: string) => `token:${createHash("sha256").update(token).digest("hex").slice(0, 8)}`;

export interface Certs {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A client certificate from another CA (mutual TLS must refuse it). */
  strangerCert: string;
  strangerKey: string;
}

/** A CA, a server certificate for 127.0.0.1/localhost, and client certificates (ours and a stranger's), EC P-256. */
export function makeCerts(dir: string): Certs {
  const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  const key = (name: string) => ssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name);
  const ca = (name: string, cn: string) => {
    key(`${name}.key`);
    ssl("req", "-x509", "-new", "-key", `${name}.key`, "-sha256", "-days", "2", "-subj", `/CN=${cn}`, "-out", `${name}.pem`);
  };
  const leaf = (name: string, caName: string, cn: string, ext: string) => {
    key(`${name}.key`);
    ssl("req", "-new", "-key", `${name}.key`, "-subj", `/CN=${cn}`, "-out", `${name}.csr`);
    writeFileSync(join(dir, `${name}.ext`), ext);
    ssl("x509", "-req", "-in", `${name}.csr`, "-CA", `${caName}.pem`, "-CAkey", `${caName}.key`, "-CAcreateserial", "-days", "2", "-sha256", "-extfile", `${name}.ext`, "-out", `${name}.pem`);
  };
  ca("ca", "svc test CA");
  ca("other-ca", "someone else's CA");
  leaf("server", "ca", "localhost", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  leaf("client", "ca", "svc client", "extendedKeyUsage=clientAuth\n");
  leaf("stranger", "other-ca", "stranger", "extendedKeyUsage=clientAuth\n");
  const p = (f: string) => join(dir, f);
  return {
    ca: p("ca.pem"),
    serverCert: p("server.pem"),
    serverKey: p("server.key"),
    clientCert: p("client.pem"),
    clientKey: p("client.key"),
    strangerCert: p("stranger.pem"),
    strangerKey: p("stranger.key"),
  };
}

/** Percentile (0-100) of a list of numbers. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
