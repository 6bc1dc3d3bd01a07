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

/**
 * The requests that arrived on the Unix socket. Module-private: no other code can mark a request
 * trusted (a `Symbol.for` key could be minted by anyone in the process, a property set by any
 * plugin); weak, so a finished request leaves it with nothing to clean up.
 */
const unixRequests = new WeakSet<IncomingMessage>();

/** The daemon calls this on every request that arrived on `<data>/svcd.sock` before routing it. */
export function markUnixSocketRequest(req: IncomingMessage): void {
  unixRequests.add(req);
}

export function isUnixSocketRequest(request: FastifyRequest | IncomingMessage): boolean {
  return unixRequests.has("raw" in request ? request.raw : request);
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
