import { createHash, timingSafeEqual } from "node:crypto";

/** SHA-256 of a secret: a fixed-length value, so comparing two never leaks a length. */
export function digest(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

/** Constant-time equality of two SHA-256 digests (CONTRACT §5). */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A non-secret name for a bearer token, used as the principal (`triggered_by`)
 * and in logs: `token:` and the first 8 hex digits of its SHA-256. Operators
 * find which line it is with `printf %s "$TOKEN" | sha256sum | cut -c1-8`;
 * nobody learns anything usable about a random token from it.
 */
export function tokenLabel(token: string): string {
  return `token:${digest(token).toString("hex").slice(0, 8)}`;
}
