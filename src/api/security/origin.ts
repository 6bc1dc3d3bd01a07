import { isIP } from "node:net";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { DaemonConfig } from "../../config/types.js";
import { ApiError } from "../errors.js";
import { sendError } from "../hooks.js";
import { isUnixSocketRequest } from "../principal.js";
import { isLoopback } from "./exposure.js";

/**
 * Browser-borne attacks that CORS alone does not stop (docs/SECURITY.md):
 *
 * - Cross-site requests. Any web page may send a POST without a body (or
 *   open a WebSocket) to the daemon; CORS only hides the answer. The
 *   browser adds cached Basic credentials, and with `auth.type: none` none
 *   are needed. So a request that changes something (any method but GET,
 *   HEAD, OPTIONS) or opens a WebSocket, and carries an `Origin` that is
 *   neither the daemon's own (the `Host` it was sent to) nor one of
 *   `api.cors.allowed_origins`, is refused with 403. Clients that are not
 *   browsers send no `Origin` and are not affected.
 * - DNS rebinding. A page on evil.example that re-points its name to
 *   127.0.0.1 is "same origin" with the daemon. Without auth, a connection
 *   that arrived on a loopback address may not name a DNS domain in `Host`
 *   (a name with a dot, like `evil.example`): IP literals, `localhost`,
 *   `*.localhost` and single-label names (`svc`) are fine, since a
 *   rebinding page needs a public DNS name.
 *
 * The Unix socket is not a browser's concern and is exempt.
 */
export function installOriginGuard(app: FastifyInstance, cfg: DaemonConfig["api"]["cors"], authType: () => DaemonConfig["auth"]["type"]): void {
  const anyOrigin = cfg.allowedOrigins.includes("*");
  const allowed = new Set(cfg.allowedOrigins);
  app.addHook("onRequest", async (request, reply) => {
    if (isUnixSocketRequest(request)) return;
    const host = headerValue(request.headers.host)?.toLowerCase() ?? null;
    if (authType() === "none" && host !== null && isDomainName(hostname(host)) && isLoopback(request.socket.localAddress ?? "")) {
      return sendError(
        reply,
        new ApiError(
          "forbidden",
          `Host "${host}" is a DNS name: without auth (auth.type none) the daemon answers on its loopback address only to localhost, IP addresses and single-label names (DNS rebinding protection); use http://127.0.0.1:<port>/ or enable auth`,
        ),
      );
    }
    if (!changesOrStreams(request)) return;
    const origin = headerValue(request.headers.origin);
    if (origin === undefined || anyOrigin || allowed.has(origin)) return;
    if (sameOrigin(origin, host) || sameOrigin(origin, headerValue(request.headers["x-forwarded-host"])?.toLowerCase() ?? null)) return;
    return sendError(reply, new ApiError("forbidden", `cross-origin request from ${origin} refused: add that origin to api.cors.allowed_origins to allow it`));
  });
}

function changesOrStreams(request: FastifyRequest): boolean {
  const m = request.method;
  if (m !== "GET" && m !== "HEAD" && m !== "OPTIONS") return true;
  const upgrade = request.headers.upgrade;
  return typeof upgrade === "string" && upgrade.toLowerCase() === "websocket";
}

function sameOrigin(origin: string, host: string | null): boolean {
  if (host === null) return false;
  try {
    return new URL(origin).host.toLowerCase() === host;
  } catch {
    return false;
  }
}

/** `127.0.0.1:8420` -> `127.0.0.1`, `[::1]:8420` -> `[::1]`, `localhost` -> `localhost`. */
function hostname(host: string): string {
  if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1);
  const i = host.lastIndexOf(":");
  return i < 0 ? host : host.slice(0, i);
}

/** A name a web page could be served from and rebound: it has a dot, and is neither an IP literal nor under `.localhost`. */
function isDomainName(name: string): boolean {
  if (name.startsWith("[") || isIP(name) !== 0) return false;
  const n = name.replace(/\.$/, "");
  return n.includes(".") && !isLoopback(n);
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
