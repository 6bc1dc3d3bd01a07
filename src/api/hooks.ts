import { createRequire } from "node:module";
import type { Duplex } from "node:stream";
import type { Ajv, ValidateFunction } from "ajv";
import type * as AjvModule from "ajv";
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";
import { ApiError, notFound } from "./errors.js";
import { describeStorageError } from "../store/errors.js";
import { mapError } from "./mapError.js";

const require = createRequire(import.meta.url);

/**
 * Cross-cutting behaviour of every route: the error shape, 404 for unknown
 * routes, JSON body parsing, case-insensitive enum query values and
 * debug-level request logging.
 */
export function installErrorHandling(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler((err: unknown, request, reply) => {
    const mapped = mapError(err);
    if (mapped) return sendError(reply, mapped);
    // Unexpected: log with context, answer without internals (no stack, no message).
    log.error(
      { err: toError(err), method: request.method, path: pathOf(request), route: request.routeOptions.url },
      `API request failed: ${request.method} ${pathOf(request)}`,
    );
    return sendError(reply, new ApiError("internal", describeStorageError(err) ?? "internal error: the daemon logged the details"));
  });
  app.setNotFoundHandler((request, reply) => {
    sendError(reply, notFound(`no route ${request.method} ${pathOf(request)} (see GET /api/openapi.json)`));
  });
}

/** ajv, CommonJS, loaded synchronously at the first compile (a validator cannot wait). */
function loadAjv(): typeof AjvModule.Ajv {
  return (require("ajv") as typeof AjvModule).Ajv;
}

/**
 * Loads ajv now. The daemon calls it just after the API listens, off the
 * startup path: loading it reads files, which must not wait for a first
 * request that may come when svcd has no file descriptors left (a 500).
 */
export function preloadValidation(): void {
  loadAjv();
}

/** The validator Fastify calls: ajv's, or one that compiles ajv's on first use. */
type RouteValidator = ((data: unknown, dataCxt?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };

/**
 * Query strings and path parameters are text, so their values are coerced
 * to the schema's types (`?limit=10`); JSON bodies are typed already and are
 * not (`{"reason": 42}` is a 400, not "42").
 *
 * Each route's schema is compiled on the route's first request, not at
 * startup: compiling every route's schemas (and ajv's meta-schema), and
 * loading ajv, delayed every daemon start's first answer (figures:
 * docs/PERFORMANCE.md, Fixes, "Startup: every API route's schema compiled
 * before the first answer"). The schemas are constants that the API tests compile.
 */
export function validatorCompiler() {
  const base = { allErrors: false, useDefaults: true, removeAdditional: false, strict: false } as const;
  let coercing: Ajv | null = null;
  let exact: Ajv | null = null;
  const ajvFor = (httpPart: string | undefined): Ajv => {
    const AjvClass = loadAjv();
    if (httpPart === "body") return (exact ??= new AjvClass({ ...base, coerceTypes: false }));
    return (coercing ??= new AjvClass({ ...base, coerceTypes: "array" }));
  };
  return ({ schema, httpPart }: { schema: object; httpPart?: string }): RouteValidator => {
    let compiled: ValidateFunction | null = null;
    const validate: RouteValidator = (data, dataCxt) => (compiled ??= ajvFor(httpPart).compile(schema))(data, dataCxt as never);
    // Fastify reads a failed function's `errors` (attached as `validation`), and
    // passes the parent object (so ajv can coerce a root value) only to functions
    // with a `schemaEnv`, as ajv's have.
    Object.defineProperty(validate, "errors", { get: () => compiled?.errors ?? null });
    validate.schemaEnv = true;
    return validate;
  };
}

/** Errors Fastify meets before routing (bad percent-encoding in the URL...), in the same shape. */
export function frameworkError(err: unknown, _request: FastifyRequest, reply: FastifyReply): void {
  sendError(reply, mapError(err) ?? new ApiError("bad_request", "the request could not be routed"));
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (headers or URL over 16 KiB, a NUL in the
 * request line, a header timeout): answered in the catalogue's shape too, then the connection closed.
 */
export function clientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, message] =
    err.code === "HPE_HEADER_OVERFLOW"
      ? [431, "Request Header Fields Too Large", "the request's headers and URL are too large (at most 16 KiB together): send less in them"]
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "Request Timeout", "the request did not arrive in time (api.timeouts)"]
        : [400, "Bad Request", "the request is not valid HTTP"];
  const body = JSON.stringify(new ApiError("bad_request", message).body());
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function sendError(reply: FastifyReply, e: ApiError): FastifyReply {
  if (e.code === "unauthorized" && !reply.hasHeader("www-authenticate")) reply.header("WWW-Authenticate", 'Bearer realm="svc"');
  return reply.code(e.status).type("application/json; charset=utf-8").send(e.body());
}

/** The path without the query string (queries are not logged). */
export function pathOf(request: FastifyRequest): string {
  const url = request.url;
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
}

/**
 * JSON bodies through Fastify's own parser (it guards against `__proto__`
 * poisoning), except that an empty body with a JSON content type means
 * "no body": `curl -X POST -H 'Content-Type: application/json'` works.
 * Only JSON is accepted; any other content type is 400.
 */
export function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser("error", "error");
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    if (text.trim() === "") {
      done(null, undefined);
      return;
    }
    parse(request, text, done);
  });
}

/**
 * CONTRACT §4: enum query values are matched case-insensitively. Every
 * route whose querystring schema has string enums gets a hook that maps the
 * given value to the canonical spelling before validation.
 */
export function installEnumNormalizer(app: FastifyInstance): void {
  app.addHook("onRoute", (route: RouteOptions) => {
    const enums = stringEnums(route.schema?.querystring);
    if (enums.size === 0) return;
    const hook = async (request: FastifyRequest) => {
      const query = request.query as Record<string, unknown> | undefined;
      if (!query) return;
      for (const [field, canonical] of enums) {
        const v = query[field];
        if (typeof v !== "string") continue;
        const c = canonical.get(v.toLowerCase());
        if (c !== undefined) query[field] = c;
      }
    };
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [hook] : Array.isArray(existing) ? [...existing, hook] : [existing, hook];
  });
}

function stringEnums(schema: unknown): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  const props = (schema as { properties?: Record<string, { enum?: unknown[] }> } | undefined)?.properties;
  if (!props) return out;
  for (const [field, def] of Object.entries(props)) {
    if (!Array.isArray(def.enum) || !def.enum.every((v) => typeof v === "string")) continue;
    out.set(field, new Map((def.enum as string[]).map((v) => [v.toLowerCase(), v])));
  }
  return out;
}

/** CONTRACT §1: at `log.level: debug` every request is logged (method, path, status, duration; never headers). */
export function installRequestLog(app: FastifyInstance, log: Logger): void {
  app.addHook("onResponse", async (request, reply) => {
    log.debug(
      { method: request.method, path: pathOf(request), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      "http request",
    );
  });
}
