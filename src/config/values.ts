/** Small type guards for reading schema-checked (but possibly invalid) data defensively. */
import { isValidZone as zoneIsValid } from "../schedule/nextRun.js";

export type Dict = Record<string, unknown>;

export function isDict(v: unknown): v is Dict {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

export function asDict(v: unknown): Dict {
  return isDict(v) ? v : {};
}

export function isString(v: unknown): v is string {
  return typeof v === "string";
}

export function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every(isString);
}

export function isInt(v: unknown, min: number, max: number): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= min && v <= max;
}

const zoneCache = new Map<string, boolean>();

/** IANA zone check, memoised: each check builds an Intl.DateTimeFormat (~50 us). */
export function isKnownZone(zone: string): boolean {
  let ok = zoneCache.get(zone);
  if (ok === undefined) {
    ok = zoneIsValid(zone);
    zoneCache.set(zone, ok);
  }
  return ok;
}

/** Deep-freezes plain objects and arrays (Maps are frozen as objects only). */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  } else if (!(value instanceof Map)) {
    const obj = value as Record<string, unknown>;
    for (const k in obj) deepFreeze(obj[k]);
  }
  return value;
}
