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
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/**
 * Far enough for any expression that can match at all: weekday and date repeat every 28 years in
 * 1901-2099, but a leap year skipped (2100, 2200, 2300) makes a February 29 on a given weekday 40
 * years apart (2072, then 2112).
 */
const HORIZON_DAYS = 41 * 366;
const MONTH_DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The smallest matching wall time >= `wall` (rounded up to a whole second),
 * or null when none within 41 years (only for an expression that can never
 * match, which the loader rejects). Integer arithmetic on the day number and
 * the time of day: no Date objects on the way (this runs for every slot).
 */
export function nextWallMatch(c: CompiledCron, wall: number): number | null {
  const start = Math.ceil(wall / SECOND) * SECOND;
  let day = Math.floor(start / DAY);
  const tod = start - day * DAY;
  let hour = Math.floor(tod / HOUR);
  let minute = Math.floor((tod % HOUR) / MINUTE);
  let second = Math.floor((tod % MINUTE) / SECOND);
  let [year, month, dom] = civil(day);
  let dim = monthLength(year, month);
  const lastDay = day + HORIZON_DAYS;
  for (;;) {
    if (day > lastDay) return null;
    // -1: nothing left today (month or day not allowed, or no hour left):
    // the day change below moves on to the next day at 00:00:00.
    let h = -1;
    if (c.month[month] !== 1) {
      // To the month's last day, so that the day change moves to the next month's first.
      day += dim - dom;
      dom = dim;
    } else if (dayMatches(c, dom, (((day + 4) % 7) + 7) % 7, dim)) {
      h = c.nextHour[hour]!;
    }
    if (h < 0) {
      hour = 24;
    } else {
      if (h !== hour) {
        hour = h;
        minute = second = 0;
      }
      const m = c.nextMinute[minute]!;
      if (m < 0) {
        hour += 1;
        minute = second = 0;
      } else {
        if (m !== minute) {
          minute = m;
          second = 0;
        }
        const sec = c.nextSecond[second]!;
        if (sec >= 0) return day * DAY + hour * HOUR + minute * MINUTE + sec * SECOND;
        minute += 1;
        second = 0;
        if (minute > 59) {
          minute = 0;
          hour += 1;
        }
      }
    }
    if (hour > 23) {
      day += 1;
      dom += 1;
      if (dom > dim) {
        dom = 1;
        month += 1;
        if (month > 12) {
          month = 1;
          year += 1;
        }
        dim = monthLength(year, month);
      }
      hour = minute = second = 0;
    }
  }
}

/** Year, month (1-12) and day of month of a day number (days since 1970-01-01): Hinnant's civil_from_days. */
function civil(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

function monthLength(year: number, month: number): number {
  if (month !== 2) return MONTH_DAYS[month]!;
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}

/**
 * True when no date ever matches: no allowed month has a day that passes
 * the day fields (`0 0 30 2 *`, `0 0 31 4 *`). Time fields cannot be empty.
 */
export function cronNeverMatches(spec: CronSpec): boolean {
  return nextWallMatch(compileCron(spec), Date.UTC(2001, 0, 1)) === null;
}

