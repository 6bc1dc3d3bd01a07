import type { ScheduleSpec, Weekday } from "../config/types.js";
import { DAY_MS } from "./zone.js";

/**
 * Which local calendar days a frequency runs on. Days are counted as whole
 * days since 1970-01-01 of the local calendar (the "wall" convention of
 * localTime.ts divided by DAY_MS), so the arithmetic never touches zones.
 */

const WEEKDAY_INDEX: Record<Weekday, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

/** 0 = Sunday ... 6 = Saturday. 1970-01-01 was a Thursday. */
export function dayOfWeek(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate(); // month is 1-based; day 0 = last of it
}

/** The first day >= `day` on which `spec` runs (spec is a calendar frequency). */
export function firstRunDay(spec: ScheduleSpec, day: number): number {
  switch (spec.frequency) {
    case "daily":
      return day;
    case "weekdays": {
      const dow = dayOfWeek(day);
      return dow === 6 ? day + 2 : dow === 0 ? day + 1 : day;
    }
    case "weekends": {
      const dow = dayOfWeek(day);
      return dow === 0 || dow === 6 ? day : day + (6 - dow);
    }
    case "weekly": {
      const target = WEEKDAY_INDEX[spec.weekday ?? "mon"];
      return day + ((target - dayOfWeek(day) + 7) % 7);
    }
    case "monthly":
      return firstMonthlyDay(spec.dayOfMonth ?? 1, day);
    default:
      throw new Error(`schedule: "${spec.frequency}" has no calendar days`);
  }
}

/** Day `dom` of the month, or the month's last day when it is shorter (CONTRACT §2). */
function firstMonthlyDay(dom: number, day: number): number {
  const d = new Date(day * DAY_MS);
  let year = d.getUTCFullYear();
  let month = d.getUTCMonth() + 1;
  for (;;) {
    const target = Math.min(dom, daysInMonth(year, month));
    const candidate = Math.floor(Date.UTC(year, month - 1, target) / DAY_MS);
    if (candidate >= day) return candidate;
    month += 1;
    if (month > 12) {
      month = 1;
      year += 1;
    }
  }
}
