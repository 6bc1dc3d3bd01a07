import type { CronSpec } from "../config/types.js";

/**
 * Matching a cron expression against the local wall clock, with no zone in
 * sight: a "wall" is the local date-time written as UTC epoch ms (see
 * localTime.ts). The DST rules sit on top of this, in cronRun.ts.
 *
 * Each field becomes a lookup table `next[v]` = the smallest allowed value
 * >= v (or -1), so finding the next matching wall time moves field by field
 * instead of second by second.
 */
export interface CompiledCron {
  spec: CronSpec;
  nextSecond: Int8Array;
  nextMinute: Int8Array;
  nextHour: Int8Array;
  /** month 1-12 -> allowed */
  month: Uint8Array;
  dom: Uint8Array;
  dow: Uint8Array;
  /** weekday -> bit n set when `weekday#n` is listed */
  nth: Uint8Array;
  lastWeekday: Uint8Array;
  /** Both day fields restricted: a day matches when either does. */
  bothRestricted: boolean;
}

const cache = new WeakMap<CronSpec, CompiledCron>();

export function compileCron(spec: CronSpec): CompiledCron {
  let c = cache.get(spec);
  if (c !== undefined) return c;
  c = {
    spec,
    nextSecond: nextTable(spec.seconds, 59),
    nextMinute: nextTable(spec.minutes, 59),
    nextHour: nextTable(spec.hours, 23),
    month: flags(spec.months, 12),
    dom: flags(spec.daysOfMonth, 31),
    dow: flags(spec.weekdays, 6),
    nth: nthFlags(spec.nthWeekdays),
    lastWeekday: flags(spec.lastWeekdays, 6),
    bothRestricted: spec.domRestricted && spec.dowRestricted,
  };
  cache.set(spec, c);
  return c;
}

function nextTable(values: readonly number[], max: number): Int8Array {
  const t = new Int8Array(max + 2).fill(-1);
  let next = -1;
  const allowed = new Set(values);
  for (let v = max; v >= 0; v--) {
    if (allowed.has(v)) next = v;
    t[v] = next;
  }
  return t;
}

function flags(values: readonly number[], max: number): Uint8Array {
  const t = new Uint8Array(max + 1);
  for (const v of values) t[v] = 1;
  return t;
}

function nthFlags(list: readonly { weekday: number; n: number }[]): Uint8Array {
  const t = new Uint8Array(7);
  for (const e of list) t[e.weekday]! |= 1 << e.n;
  return t;
}

/**
 * Does the day match (CONTRACT §7.1)? With both day fields restricted (neither
 * starts with `*`) either may match (Vixie cron's OR); otherwise both must.
 * `dow` is 0-6 (Sunday 0), `dim` the month's length.
 */
export function dayMatches(c: CompiledCron, day: number, dow: number, dim: number): boolean {
  const domOk = c.dom[day] === 1 || (c.spec.lastDayOfMonth && day === dim);
  const dowOk = c.dow[dow] === 1 || (c.lastWeekday[dow] === 1 && day + 7 > dim) || (c.nth[dow]! & (1 << Math.ceil(day / 7))) !== 0;
  return c.bothRestricted ? domOk || dowOk : domOk && dowOk;
}

const SECOND = 1000;
/** Far enough for any expression that can match at all (the weekday-date pattern repeats every 28 years in 1901-2099). */
const HORIZON_YEARS = 29;

/**
 * The smallest matching wall time >= `wall` (rounded up to a whole second),
 * or null when none within HORIZON_YEARS (only for an expression that can
 * never match, which the loader rejects).
 */
export function nextWallMatch(c: CompiledCron, wall: number): number | null {
  const start = Math.ceil(wall / SECOND) * SECOND;
  const d = new Date(start);
  let year = d.getUTCFullYear();
  let month = d.getUTCMonth() + 1;
  let day = d.getUTCDate();
  let hour = d.getUTCHours();
  let minute = d.getUTCMinutes();
  let second = d.getUTCSeconds();
  const lastYear = year + HORIZON_YEARS;
  let dim = daysInMonth(year, month);
  // Weekday of (year, month, day), kept in step as days advance.
  let dow = d.getUTCDay();
  const nextDay = (): void => {
    day += 1;
    dow = (dow + 1) % 7;
    hour = 0;
    minute = 0;
    second = 0;
    if (day > dim) {
      day = 1;
      month += 1;
      if (month > 12) {
        month = 1;
        year += 1;
      }
      dim = daysInMonth(year, month);
    }
  };
  for (;;) {
    if (year > lastYear) return null;
    if (c.month[month] !== 1) {
      // First day of the next month.
      dow = (dow + (dim - day) + 1) % 7;
      day = dim;
      nextDay();
      dow = (dow + 6) % 7; // nextDay() stepped the weekday once more
      continue;
    }
    if (!dayMatches(c, day, dow, dim)) {
      nextDay();
      continue;
    }
    const h = c.nextHour[hour]!;
    if (h < 0) {
      nextDay();
      continue;
    }
    if (h !== hour) {
      hour = h;
      minute = 0;
      second = 0;
    }
    const m = c.nextMinute[minute]!;
    if (m < 0) {
      hour += 1;
      minute = 0;
      second = 0;
      if (hour > 23) nextDay();
      continue;
    }
    if (m !== minute) {
      minute = m;
      second = 0;
    }
    const s = c.nextSecond[second]!;
    if (s < 0) {
      minute += 1;
      second = 0;
      if (minute > 59) {
        minute = 0;
        hour += 1;
        if (hour > 23) nextDay();
      }
      continue;
    }
    return Date.UTC(year, month - 1, day, hour, minute, s);
  }
}

/**
 * True when no date ever matches: no allowed month has a day that passes
 * the day fields (`0 0 30 2 *`, `0 0 31 4 *`). Time fields cannot be empty.
 */
export function cronNeverMatches(spec: CronSpec): boolean {
  return nextWallMatch(compileCron(spec), Date.UTC(2001, 0, 1)) === null;
}

/** Kept here rather than imported from calendar.ts, whose zone import would load luxon into `svc validate`. */
function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}
