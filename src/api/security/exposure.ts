import { isIP } from "node:net";
import type { DaemonConfig } from "../../config/types.js";

/** 127.0.0.0/8, ::1 and IPv4-mapped loopback. Wildcards (0.0.0.0, ::) are not loopback: they bind every interface. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (h === "::1") return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  return mapped !== null && mapped[1]!.startsWith("127.");
}

/**
 * SPEC "Authentication" 8 / CONTRACT §5: a bind that other machines can
 * reach without both TLS and auth gets a prominent warning naming the
 * address; null when there is nothing to warn about.
 */
export function exposureWarning(boundHost: string, address: string, cfg: DaemonConfig): string | null {
  if (isLoopback(boundHost)) return null;
  const tls = cfg.api.tls.enabled;
  const auth = cfg.auth.type !== "none";
  if (tls && auth) return null;
  const missing = [tls ? null : "without TLS (api.tls)", auth ? null : "without authentication (auth.type is none)"].filter(Boolean).join(" and ");
  const risk = auth
    ? "credentials and job data cross the network in clear text"
    : "anyone who can reach it can run, cancel and reconfigure jobs, which run shell commands as this user";
  return `WARNING: the API listens on ${address}, reachable from other machines, ${missing}: ${risk}. Bind 127.0.0.1 (api.addr) or enable both api.tls and auth.`;
}
