import type { IncomingMessage } from "node:http";
import type { FastifyInstance } from "fastify";
import { notFound } from "../errors.js";
import { sendError } from "../hooks.js";
import { isUnixSocketRequest } from "../principal.js";

/**
 * `api.base_path` (SPEC: "URL prefix under which dashboard and API are
 * mounted; stripped before routing"). On TCP, `/svc/api/jobs` is routed as
 * `/api/jobs`; a path outside the prefix is 404, and the bare prefix
 * `/svc` redirects to `/svc/` (the dashboard's URLs are relative). The
 * Unix socket carries the API without the prefix, as `svc` sends it.
 */
const OUTSIDE = Symbol("svc.api.outsideBasePath"); // module-private, like every request marker
const BARE = Symbol("svc.api.bareBasePath");

type Marked = IncomingMessage & { [OUTSIDE]?: boolean; [BARE]?: boolean };

/** Fastify's `rewriteUrl` for a base path, or undefined without one. */
export function basePathRewriter(base: string): ((req: IncomingMessage) => string) | undefined {
  if (base === "") return undefined;
  return (req: Marked) => {
    const url = req.url ?? "/";
    if (isUnixSocketRequest(req)) return url;
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    if (path === base) {
      req[BARE] = true;
      return `/${q < 0 ? "" : url.slice(q)}`;
    }
    if (path.startsWith(`${base}/`)) return url.slice(base.length);
    req[OUTSIDE] = true;
    return url;
  };
}

/** Answers requests outside the prefix (404) and the bare prefix (308 to `prefix/`) before anything else. */
export function installBasePathGate(app: FastifyInstance, base: string): void {
  if (base === "") return;
  app.addHook("onRequest", async (request, reply) => {
    const raw = request.raw as Marked;
    if (raw[OUTSIDE]) return sendError(reply, notFound(`no route ${request.method} ${pathOnly(request.url)}: the API is under ${base}/ (api.base_path)`));
    if (raw[BARE]) {
      const q = request.url.indexOf("?");
      return reply.redirect(`${base}/${q < 0 ? "" : request.url.slice(q)}`, 308);
    }
  });
}

function pathOnly(url: string): string {
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
}
