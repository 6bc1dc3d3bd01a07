import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { Socket } from "node:net";
import { createSecureContext } from "node:tls";
import type { Duplex } from "node:stream";
import type { ServerOptions as HttpsServerOptions } from "node:https";
import type { DaemonConfig } from "../../config/types.js";

type ApiConfig = DaemonConfig["api"];
type Timeouts = ApiConfig["timeouts"];

/**
 * Node server options from `api.tls` and `api.timeouts`: what Fastify
 * needs at construction (`https` or `http`). The Unix socket server takes
 * the `http` part too; it never speaks TLS (file permissions are its auth).
 */
export function serverOptions(api: ApiConfig): { https: HttpsServerOptions } | { http: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number } } {
  const common = httpTimeoutOptions(api.timeouts);
  if (!api.tls.enabled) return { http: common };
  // preflight.ts has checked that the files exist and are readable.
  const tls = {
    cert: readFileSync(api.tls.cert!),
    key: readFileSync(api.tls.key!),
    minVersion: api.tls.minVersion === "1.3" ? ("TLSv1.3" as const) : ("TLSv1.2" as const),
    // Mutual TLS: a client without a certificate signed by this CA fails the handshake.
    ...(api.tls.clientCa === null ? {} : { ca: readFileSync(api.tls.clientCa), requestCert: true, rejectUnauthorized: true }),
  };
  try {
    createSecureContext(tls);
  } catch (e) {
    const files = [`api.tls.cert ${api.tls.cert}`, `api.tls.key ${api.tls.key}`, ...(api.tls.clientCa ? [`api.tls.client_ca ${api.tls.clientCa}`] : [])];
    throw new Error(`TLS: ${files.join(", ")}: not a usable PEM certificate and key (${(e as Error).message}); TLS is enabled, so the daemon cannot start`);
  }
  return { https: { ...common, ...tls } };
}

/**
 * `read_header` -> headersTimeout, `read` -> requestTimeout (the whole
 * request). Node checks both on an interval (30 s by default): it is
 * shortened so a short timeout is kept within about a quarter of itself.
 */
export function httpTimeoutOptions(t: Timeouts): { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number } {
  const requestTimeout = t.readMs;
  // Node refuses headersTimeout > requestTimeout when both are on.
  const headersTimeout = requestTimeout > 0 && t.readHeaderMs > requestTimeout ? requestTimeout : t.readHeaderMs;
  const shortest = Math.min(...[headersTimeout, requestTimeout].filter((v) => v > 0), 120_000);
  return { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(shortest / 4))) };
}

/**
 * The timeouts Node sets as properties: `idle` -> keepAliveTimeout (between
 * requests on a kept-alive connection), `write` -> the socket inactivity
 * timeout while a request is being answered (a client that stops reading a
 * response is cut after this long without progress). `0s` turns one off.
 * A WebSocket is taken out of both once upgraded: a quiet log stream is
 * not a stalled response (the stream's own heartbeat finds dead peers).
 */
export function applyServerTimeouts(server: Server, t: Timeouts): void {
  const http = httpTimeoutOptions(t);
  server.headersTimeout = http.headersTimeout;
  server.requestTimeout = http.requestTimeout;
  server.keepAliveTimeout = t.idleMs;
  server.setTimeout(t.writeMs);
  server.prependListener("upgrade", (_req, socket: Duplex) => (socket as Socket).setTimeout?.(0));
}
