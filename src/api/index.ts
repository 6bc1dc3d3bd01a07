import websocket from "@fastify/websocket";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import { Authenticator, installAuthGate } from "./auth/index.js";
import type { ApiDeps } from "./deps.js";
import { ConfigWorker } from "./configWorker.js";
import { clientError, frameworkError, validatorCompiler, installEnumNormalizer, installErrorHandling, installJsonParser, installRequestLog } from "./hooks.js";
import { WS_DEFAULT_HEARTBEAT_MS, WS_DEFAULT_MAX_BUFFERED } from "./logStream.js";
import { collectRoutes } from "./openapi.js";
import { allRoutes } from "./routes/index.js";
import { basePathRewriter, installBasePathGate } from "./security/basePath.js";
import { installCors } from "./security/cors.js";
import { installOriginGuard } from "./security/origin.js";
import { applyServerTimeouts, serverOptions } from "./security/server.js";

export type { ApiDeps, ReloadResult } from "./deps.js";
export { ERROR_CATALOGUE, ERROR_CODES, ApiError } from "./errors.js";
export type { ErrorCode } from "./errors.js";
export { isUnixSocketRequest, markUnixSocketRequest, principal, triggeredBy } from "./principal.js";
export type { Principal } from "./principal.js";
export { Authenticator } from "./auth/index.js";
export { applyServerTimeouts, httpTimeoutOptions } from "./security/server.js";
export { preloadValidation } from "./hooks.js";
export { exposureWarning, isLoopback } from "./security/exposure.js";
export { createMetrics } from "./metrics.js";
export { DOWNLOAD_PREFIX } from "./routes/backup.js";
export type { Metrics } from "./metrics.js";
export { WS_CLOSE_NOT_FOUND, WS_CLOSE_TOO_SLOW, WS_DEFAULT_MAX_BUFFERED } from "./logStream.js";

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]>;

/** CONTRACT §4: request bodies over 1 MiB get 413. */
export const BODY_LIMIT = 1024 * 1024;

export interface ApiOptions {
  /** A WebSocket client with more unsent bytes than this is closed with 4429. Default 8 MiB. */
  wsMaxBufferedBytes?: number;
  /** Ping interval of the log stream; a client that misses a pong is cut. Default 30 s. */
  wsHeartbeatMs?: number;
  /**
   * Authentication and RBAC (`auth.*`). The daemon passes its own, which it
   * reconfigures on reload; without one it is built from `deps.daemonConfig()`.
   */
  auth?: Authenticator;
  /**
   * The thread that parses config texts (configWorker.ts); default a new
   * one. Either way it is ended when the server closes.
   */
  configWorker?: ConfigWorker;
}

/**
 * The daemon's HTTP API, WebSocket log stream and dashboard, ready but not
 * listening. The daemon listens on TCP and routes the Unix socket's requests
 * into the same instance (`app.routing`, `upgrade` forwarded to `app.server`).
 */
export async function buildApi(deps: ApiDeps, options: ApiOptions = {}): Promise<FastifyInstance> {
  const api = deps.daemonConfig().api;
  const validate = validatorCompiler();
  const fastifyOptions: FastifyServerOptions & Record<string, unknown> = {
    bodyLimit: BODY_LIMIT,
    logger: false,
    frameworkErrors: frameworkError,
    clientErrorHandler: clientError,
    // Job names are at most 64 characters; anything longer is answered 400 by the schema, not a router error.
    routerOptions: { maxParamLength: 1000 },
    // TLS (api.tls) and the header/request timeouts (api.timeouts).
    ...serverOptions(api),
    // api.base_path is stripped before routing (TCP only; see security/basePath.ts).
    rewriteUrl: basePathRewriter(api.basePath),
    // Our own compilers, given here rather than through setValidatorCompiler/setSerializerCompiler
    // (the same effect) so that Fastify never loads its default ajv and fast-json-stringify ones.
    // (Fastify's types name its default compilers' factories; any compiler works, as with the setters.)
    schemaController: {
      compilersFactory: {
        buildValidator: () => validate,
        // Responses are plain JSON: response schemas document them (and tests check them) but never drop a field.
        buildSerializer: () => () => (data: unknown) => JSON.stringify(data),
      } as unknown as CompilersFactory,
    },
  };
  const app = Fastify(fastifyOptions) as unknown as FastifyInstance;
  applyServerTimeouts(app.server, api.timeouts);
  installErrorHandling(app, deps.log);
  installJsonParser(app);
  installRequestLog(app, deps.log);
  installEnumNormalizer(app);
  // Order matters (onRequest hooks run in this order): the WebSocket plugin marks upgrades (and
  // closes the socket after a refusal), CORS answers allowed preflights, then the base path, the
  // cross-origin and DNS-rebinding guard, then auth.
  const auth = options.auth ?? ownAuthenticator(app, deps);
  await app.register(websocket, { options: { maxPayload: 64 * 1024, handleProtocols: chooseSubprotocol } });
  await installCors(app, api.cors);
  installBasePathGate(app, api.basePath);
  installOriginGuard(app, api.cors, () => auth.type);
  installAuthGate(app, auth);
  const docs = collectRoutes(app);
  const configWorker = options.configWorker ?? new ConfigWorker();
  // preClose, before the requests in flight are waited for: a config view being
  // computed answers 409 (shutting down) at once instead of holding up svcd's stop.
  app.addHook("preClose", async () => configWorker.close());
  await app.register(allRoutes, {
    deps,
    docs,
    logStream: {
      maxBufferedBytes: options.wsMaxBufferedBytes ?? WS_DEFAULT_MAX_BUFFERED,
      heartbeatMs: options.wsHeartbeatMs ?? WS_DEFAULT_HEARTBEAT_MS,
    },
    configWorker,
  });
  await app.ready();
  return app;
}

function ownAuthenticator(app: FastifyInstance, deps: ApiDeps): Authenticator {
  const auth = new Authenticator(deps.log);
  const r = auth.configure(deps.daemonConfig().auth);
  if (!r.ok) throw new Error(r.error);
  app.addHook("onClose", () => auth.close());
  return auth;
}

/**
 * The subprotocol the server answers with: a client must get one it offered,
 * so a browser that offers only `bearer.<token>` gets that echoed; any other
 * offered protocol is preferred, so the token need not travel back.
 */
function chooseSubprotocol(offered: Set<string>): string | false {
  let first: string | false = false;
  for (const p of offered) {
    if (!p.startsWith("bearer.")) return p;
    if (first === false) first = p;
  }
  return first;
}
