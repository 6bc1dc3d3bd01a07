import type { ExcludeSpec } from "../config/types.js";
import { calendarOf } from "./icsCalendar.js";
import { resolveWall } from "./localTime.js";
import { DAY_MS, type ZoneInfo } from "./zone.js";

/**
 * `exclude` (CONTRACT §7.1): a slot does not run when its local date (the
 * date of its instant in the job's zone, so after the DST rules placed it)
 * is listed in `dates`, or when it lies in an event of a calendar.
 */
export interface Exclusion {
  /** "2026-12-25 in holidays.ics: Christmas Day", "2026-12-24 in exclude.dates". */
  reason: string;
  /**
   * No slot before this instant can be runnable because of this same span
   * ends later: a hint to skip ahead, never past a slot that could run.
   */
  until: number;
}

interface CompiledExclude {
  dates: Set<string>;
}

const compiled = new WeakMap<ExcludeSpec, CompiledExclude>();

export function exclusionAt(exclude: ExcludeSpec, zone: ZoneInfo, at: number): Exclusion | null {
  let c = compiled.get(exclude);
  if (c === undefined) {
    c = { dates: new Set(exclude.dates) };
    compiled.set(exclude, c);
  }
  const wall = at + zone.offsetMs(at);
  const day = Math.floor(wall / DAY_MS);
  const date = new Date(day * DAY_MS).toISOString().slice(0, 10);
  if (c.dates.has(date)) return { reason: `${date} in exclude.dates`, until: endOfDays(zone, at, day + 1) };
  for (const cal of exclude.calendars) {
    const hit = calendarOf(cal.text).hit(day, at, zone);
    if (hit === null) continue;
    const until = hit.endDay !== null ? endOfDays(zone, at, hit.endDay) : hit.until!;
    return { reason: `${date} in ${cal.name}: ${hit.summary}`, until };
  }
  return null;
}

/**
 * The first instant of local day `nextDay`, but never later than the end of
 * the offset segment holding `at`: where a fold crosses midnight (Santiago
 * falls back from 24:00 to 23:00) the excluded date comes back after the
 * next day began, so skipping ahead stops at each transition.
 */
function endOfDays(zone: ZoneInfo, at: number, nextDay: number): number {
  return Math.min(resolveWall(zone, nextDay * DAY_MS).at, zone.segmentAt(at).end);
}

export function isEmptyExclude(exclude: ExcludeSpec | null | undefined): boolean {
  return exclude === null || exclude === undefined || (exclude.dates.length === 0 && exclude.calendars.length === 0);
}
