import type { IncomingMessage } from "node:http";
import type { FastifyRequest } from "fastify";

/**
 * Who is calling. Peers on the Unix socket are trusted as `admin`
 * (CONTRACT §1, §5: file permissions are the auth). Authentication over TCP
 * comes with the security work; it sets `request.principal` in a hook, and
 * everything that asks who the caller is goes through `principal()`.
 */
export interface Principal {
  /** The authenticated name, or null when nobody authenticated. */
  name: string | null;
  role: string;
  /** How the request arrived. */
  transport: "unix" | "tcp";
}

const UNIX = Symbol.for("svc.api.unixSocket");

/** The daemon calls this on every request that arrived on `<data>/svcd.sock` before routing it. */
export function markUnixSocketRequest(req: IncomingMessage): void {
  (req as unknown as Record<symbol, boolean>)[UNIX] = true;
}

export function isUnixSocketRequest(request: FastifyRequest | IncomingMessage): boolean {
  const raw = "raw" in request ? request.raw : request;
  return (raw as unknown as Record<symbol, boolean>)[UNIX] === true;
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the auth hook (security work) once credentials are checked. */
    principal?: Principal;
  }
}

export function principal(request: FastifyRequest): Principal {
  if (request.principal) return request.principal;
  if (isUnixSocketRequest(request)) return { name: null, role: "admin", transport: "unix" };
  // auth.type none (the only mode until the security work): every caller may do everything.
  return { name: null, role: "admin", transport: "tcp" };
}

/** `triggered_by` of manual runs (CONTRACT §3): the principal, else `cli` (socket) or `api` (TCP). */
export function triggeredBy(request: FastifyRequest): string {
  const p = principal(request);
  if (p.name) return p.name;
  return p.transport === "unix" ? "cli" : "api";
}
