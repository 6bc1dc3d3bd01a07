/** Small type guards for reading schema-checked (but possibly invalid) data defensively. */

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
let zoneList: Set<string> | null = null;

function listedZones(): Set<string> {
  // The list leaves out "UTC", which every implementation must support (ECMA-402).
  zoneList ??= new Set([...Intl.supportedValuesOf("timeZone"), "UTC"]);
  return zoneList;
}

/**
 * IANA zone check: the same answer as luxon's `IANAZone.isValidZone` (which
 * the schedule module uses), without loading luxon (262 KB to compile at every
 * `svc validate`): zones the runtime lists are valid; others get luxon's own
 * probe, a DateTimeFormat with that zone. values.test.ts pins the equivalence.
 */
export function isKnownZone(zone: string): boolean {
  let ok = zoneCache.get(zone);
  if (ok === undefined && listedZones().has(zone)) {
    // The runtime's own list of zones: valid without building a DateTimeFormat,
    // whose first construction costs 15-40 ms (ICU formatting data).
    ok = true;
    zoneCache.set(zone, ok);
  }
  if (ok === undefined) {
    ok = false;
    if (zone) {
      try {
        new Intl.DateTimeFormat("en-US", { timeZone: zone }).format();
        ok = true;
      } catch {
        ok = false;
      }
    }
    zoneCache.set(zone, ok);
  }
  return ok;
}

/** The machine's zone (honours TZ), as the schedule module's `systemZone`; "UTC" when unknown. */
export function systemZone(): string {
  const zone = new Intl.DateTimeFormat().resolvedOptions().timeZone;
  return zone !== undefined && isKnownZone(zone) ? zone : "UTC";
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
