import cors from "@fastify/cors";
import type { FastifyInstance } from "fastify";
import type { DaemonConfig } from "../../config/types.js";

/**
 * `api.cors` (SPEC). Without allowed origins no CORS header is ever sent,
 * so browsers keep other sites from reading the API. A listed origin gets
 * its own `Access-Control-Allow-Origin` (and `-Credentials` when
 * `allow_credentials`); `*` allows every origin (the config loader warns).
 * Preflights of allowed origins are answered before the auth hook runs
 * (browsers send no credentials on a preflight); any other origin gets no
 * CORS header at all, and its preflight goes on to auth and routing like
 * any request.
 */
export async function installCors(app: FastifyInstance, cfg: DaemonConfig["api"]["cors"]): Promise<void> {
  const origins = cfg.allowedOrigins;
  if (origins.length === 0) return;
  const any = origins.includes("*");
  const allowed = new Set(origins);
  await app.register(cors, {
    origin: (origin: string | undefined, cb: (err: Error | null, allow: string | boolean) => void) => {
      if (origin === undefined) return cb(null, false);
      if (any) return cb(null, "*");
      cb(null, allowed.has(origin) ? origin : false);
    },
    credentials: cfg.allowCredentials,
    methods: ["GET", "HEAD", "POST"],
    allowedHeaders: ["Authorization", "Content-Type"],
    maxAge: 600,
    // An OPTIONS without Access-Control-Request-Method is answered as a preflight too (204), not with a
    // plain-text 400 outside the error catalogue's shape.
    strictPreflight: false,
  });
}
