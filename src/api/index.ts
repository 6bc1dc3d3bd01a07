import websocket from "@fastify/websocket";
import Fastify, { type FastifyInstance } from "fastify";
import type { ApiDeps } from "./deps.js";
import { frameworkError, validatorCompiler, installEnumNormalizer, installErrorHandling, installJsonParser, installRequestLog } from "./hooks.js";
import { WS_DEFAULT_HEARTBEAT_MS, WS_DEFAULT_MAX_BUFFERED } from "./logStream.js";
import { collectRoutes } from "./openapi.js";
import { allRoutes } from "./routes/index.js";

export type { ApiDeps, ReloadResult } from "./deps.js";
export { ERROR_CATALOGUE, ERROR_CODES, ApiError } from "./errors.js";
export type { ErrorCode } from "./errors.js";
export { isUnixSocketRequest, markUnixSocketRequest, principal, triggeredBy } from "./principal.js";
export type { Principal } from "./principal.js";
export { WS_CLOSE_NOT_FOUND, WS_CLOSE_TOO_SLOW, WS_DEFAULT_MAX_BUFFERED } from "./logStream.js";

/** CONTRACT §4: request bodies over 1 MiB get 413. */
export const BODY_LIMIT = 1024 * 1024;

export interface ApiOptions {
  /** A WebSocket client with more unsent bytes than this is closed with 4429. Default 8 MiB. */
  wsMaxBufferedBytes?: number;
  /** Ping interval of the log stream; a client that misses a pong is cut. Default 30 s. */
  wsHeartbeatMs?: number;
}

/**
 * The daemon's HTTP API, WebSocket log stream and dashboard, ready but not
 * listening. The daemon listens on TCP and routes the Unix socket's requests
 * into the same instance (`app.routing`, `upgrade` forwarded to `app.server`).
 */
export async function buildApi(deps: ApiDeps, options: ApiOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: BODY_LIMIT,
    logger: false,
    frameworkErrors: frameworkError,
    // Job names are at most 64 characters; anything longer is answered 400 by the schema, not a router error.
    routerOptions: { maxParamLength: 1000 },
  });
  // Responses are plain JSON: response schemas document them (and tests check them) but never drop a field.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.setValidatorCompiler(validatorCompiler());
  installErrorHandling(app, deps.log);
  installJsonParser(app);
  installRequestLog(app, deps.log);
  installEnumNormalizer(app);
  const docs = collectRoutes(app);
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  await app.register(allRoutes, {
    deps,
    docs,
    logStream: {
      maxBufferedBytes: options.wsMaxBufferedBytes ?? WS_DEFAULT_MAX_BUFFERED,
      heartbeatMs: options.wsHeartbeatMs ?? WS_DEFAULT_HEARTBEAT_MS,
    },
  });
  await app.ready();
  return app;
}
