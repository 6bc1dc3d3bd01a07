import { inIsoRange, parseInstant } from "../shared/instant.js";
import { badRequest } from "./errors.js";

/** Query filters without the absent and empty ones (`?job=` means no job filter). */
export function definedOnly<T extends object>(q: object): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== "") out[k] = v;
  return out as T;
}

/**
 * A query's instant (`from`, `to`) as epoch ms, or a 400 naming the field. Strict ISO 8601: a date-time
 * needs its zone (Date.parse read "1" as 2001 and a zoneless time in the daemon's zone).
 */
export function instantQuery(field: string, value: string): number {
  const ms = parseInstant(value);
  if (ms === null || !inIsoRange(ms)) {
    throw badRequest(`query "${field}" must be an ISO 8601 instant or date between the years 0000 and 9999, got "${value}"`, [
      { in: "query", field, message: "must be an ISO 8601 instant or date between the years 0000 and 9999" },
    ]);
  }
  return ms;
}
