import type { IncomingHttpHeaders } from "node:http";

/** What a request presented, before anything is checked. */
export type Presented =
  | { kind: "none" }
  | { kind: "bearer"; token: string }
  | { kind: "basic"; username: string; password: string }
  | { kind: "malformed"; why: string }
  /** Another scheme (Digest, Negotiate ...), or a bare value without one. */
  | { kind: "other" };

/** Longer credentials are refused unread: no token or password is this long. */
const MAX_CREDENTIAL = 4096;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The `Authorization` header, or for a WebSocket upgrade without one, the
 * subprotocol `bearer.<token>` (browsers cannot set headers on a
 * WebSocket; CONTRACT §5). Messages never quote the credentials.
 */
export function presentedCredentials(headers: IncomingHttpHeaders, isUpgrade: boolean): Presented {
  const header = headers.authorization;
  if (header !== undefined) return parseAuthorization(header);
  if (isUpgrade) {
    const offered = headers["sec-websocket-protocol"];
    if (typeof offered === "string") {
      for (const p of offered.split(",")) {
        const proto = p.trim();
        if (proto.startsWith("bearer.")) {
          const token = proto.slice("bearer.".length);
          return token === "" ? { kind: "malformed", why: "the WebSocket subprotocol bearer. carries no token" } : { kind: "bearer", token };
        }
      }
    }
  }
  return { kind: "none" };
}

export function parseAuthorization(header: string): Presented {
  if (header.length > MAX_CREDENTIAL) return { kind: "malformed", why: "the Authorization header is too long" };
  const m = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?: +(.*))?$/.exec(header.trim());
  if (!m) return { kind: "malformed", why: 'the Authorization header is not "<scheme> <credentials>"' };
  const scheme = m[1]!.toLowerCase();
  const value = (m[2] ?? "").trim();
  if (scheme === "bearer") {
    if (value === "") return { kind: "malformed", why: "the Authorization header has no token after Bearer" };
    if (/\s/.test(value)) return { kind: "malformed", why: "the bearer token contains whitespace" };
    return { kind: "bearer", token: value };
  }
  if (scheme === "basic") {
    if (value === "" || !BASE64.test(value)) return { kind: "malformed", why: "the Basic credentials are not base64" };
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return { kind: "malformed", why: 'the Basic credentials are not "username:password"' };
    return { kind: "basic", username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  return { kind: "other" };
}
