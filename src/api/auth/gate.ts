import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "../errors.js";
import { pathOf, sendError } from "../hooks.js";
import { isUnixSocketRequest } from "../principal.js";
import type { Authenticator } from "./authenticator.js";
import { splitPath } from "./rbac.js";

/**
 * The auth middleware (CONTRACT §5): one onRequest hook in front of every
 * route, WebSocket upgrades included, before any body is read. Exempt: the
 * Unix socket (its peers are admin) and the dashboard's static files
 * (`GET /`, `GET /assets/*`), so the page can load and ask for a token.
 * A request that authenticates gets `request.principal`; its role is then
 * checked against `auth.rbac` on the route as the router matched it.
 */
export function installAuthGate(app: FastifyInstance, auth: Authenticator): void {
  app.addHook("onRequest", async (request, reply) => {
    if (auth.type === "none" || isUnixSocketRequest(request)) return;
    const method = request.method;
    const path = pathOf(request);
    if ((method === "GET" || method === "HEAD") && (path === "/" || path.startsWith("/assets/"))) return;

    const r = await auth.authenticate({ headers: request.headers, isUpgrade: isUpgrade(request), client: request.ip });
    if (!r.ok) {
      reply.header("WWW-Authenticate", r.challenge);
      if (r.retryAfterS !== undefined) reply.header("Retry-After", String(r.retryAfterS));
      return sendError(reply, new ApiError("unauthorized", r.message));
    }
    request.principal = r.principal;
    const { role } = r.principal;
    request.permits = (m, p) => auth.allows(role, m.toUpperCase(), splitPath(p));
    if (!allowed(auth, role, method, routeSegments(request))) {
      // An undefined role is not quoted: it may come from a token file line written the wrong way
      // round, where the role's place holds a token (and this caller presented the other word).
      const why = auth.hasRole(role) ? `role "${role}" may not ${method} ${path}` : `this credential's role is not defined in auth.rbac, so it may not use any route`;
      return sendError(reply, new ApiError("forbidden", `${why} (auth.rbac)`));
    }
  });
}

/**
 * A job segment no rule can name: rule paths have no whitespace, so only `*` and `**` match it.
 * (A job called `backfills` must not lend its rules to every backfill.)
 */
const ANY_JOB = " ";

/**
 * auth.rbac on a route, and the aliases of CONTRACT §7.3 ("RBAC as POST /api/jobs/**"):
 * POST /api/backfills/<id>/... is allowed to a role whose rules allow POST under
 * /api/jobs/<any job>/ (`POST /api/jobs/**`, who may start any job's backfill), besides its own
 * rules for /api/backfills.
 */
function allowed(auth: Authenticator, role: string, method: string, segments: string[]): boolean {
  if (auth.allows(role, method, segments)) return true;
  return method === "POST" && segments[0] === "api" && segments[1] === "backfills" && auth.allows(role, method, ["api", "jobs", ANY_JOB, ...segments.slice(1)]);
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the auth gate with the principal: whether its role may call `METHOD path` too (auth.rbac). */
    permits?: (method: string, path: string) => boolean;
  }
}

/**
 * Whether the caller of `request` may call `method path` as well (a route
 * that shows more to those who may change a thing). Without a principal the
 * caller is admin: auth.type none, or the Unix socket (CONTRACT §1).
 */
export function mayCall(request: FastifyRequest, method: string, path: string): boolean {
  if (request.principal) return request.permits?.(method, path) ?? false;
  return true;
}

/**
 * A real WebSocket handshake (what Node hands the WebSocket server as an upgrade): GET, `Upgrade:
 * websocket`, `Connection: upgrade` and a key. An `Upgrade` header alone on a plain request is not one,
 * and must not make the `bearer.<token>` subprotocol a way to authenticate any route.
 */
function isUpgrade(request: FastifyRequest): boolean {
  const { upgrade, connection } = request.headers;
  return (
    request.method === "GET" &&
    typeof upgrade === "string" &&
    upgrade.toLowerCase() === "websocket" &&
    typeof connection === "string" &&
    /(^|,)\s*upgrade\s*(,|$)/i.test(connection) &&
    typeof request.headers["sec-websocket-key"] === "string"
  );
}

/**
 * The path as the router understood it: the matched route's template with
 * each parameter as one segment (so `%2F` in a job name cannot add a
 * segment), or, when no route matched, the percent-decoded request path.
 */
export function routeSegments(request: FastifyRequest): string[] {
  const template = request.routeOptions.url;
  const params = (request.params ?? {}) as Record<string, string | undefined>;
  if (template !== undefined) {
    const out: string[] = [];
    for (const seg of splitPath(template)) {
      if (seg === "*") out.push(...(params["*"] ?? "").split("/"));
      else if (/^:[A-Za-z0-9_]+$/.test(seg)) out.push(params[seg.slice(1)] ?? "");
      else if (seg.includes(":") || seg.includes("*")) return decodedSegments(pathOf(request));
      else out.push(seg);
    }
    return out;
  }
  return decodedSegments(pathOf(request));
}

function decodedSegments(path: string): string[] {
  return splitPath(path).map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
}
