import { occurrences, parseIcs, type EventModel, type EventZone, type IcalTime } from "./icsParse.js";
import { resolveWall } from "./localTime.js";
import { DAY_MS, isValidZone, zoneInfo, type ZoneInfo } from "./zone.js";

/**
 * The events of an `exclude.calendar` file placed in time, answering "does
 * this slot lie in an event, and which?".
 *
 * Times: all-day events (DATE values) are local dates of the job's zone;
 * timed events are instants when written in UTC (`...Z`) or with a TZID
 * (an IANA name, placed by our own DST rules, or a VTIMEZONE of the file);
 * floating times (no zone) are wall times of the job's zone.
 *
 * Occurrences are expanded per year on first use and kept: one year of a
 * daily rule is 365 entries.
 */

/** An all-day occurrence: local days [startDay, endDay) counted from 1970-01-01. */
interface DayRange {
  startDay: number;
  endDay: number;
  summary: string;
}

/** A timed occurrence: instants, or walls when floating. Zero-length events cover their start only. */
interface TimeRange {
  start: number;
  end: number;
  floating: boolean;
  summary: string;
}

interface YearOccurrences {
  days: DayRange[];
  times: TimeRange[];
}

export interface CalendarHit {
  summary: string;
  /** All-day: the first local day after the event; timed: null (see `until`). */
  endDay: number | null;
  /** Timed: the instant the event ends; all-day: null. */
  until: number | null;
}

export class IcsCalendar {
  private readonly years = new Map<number, YearOccurrences>();

  constructor(private readonly events: EventModel[]) {}

  /**
   * The event covering the slot at instant `at`, whose local day is `day`
   * in `zone`; null when none does.
   */
  hit(day: number, at: number, zone: ZoneInfo): CalendarHit | null {
    const occ = this.occurrences(new Date(day * DAY_MS).getUTCFullYear());
    for (const r of occ.days) {
      if (day >= r.startDay && day < r.endDay) return { summary: r.summary, endDay: r.endDay, until: null };
    }
    const wall = at + zone.offsetMs(at);
    for (const r of occ.times) {
      // Floating times are walls: most are far from the slot and need no placing.
      if (r.floating && (wall < r.start - DAY_MS || wall > r.end + DAY_MS)) continue;
      const start = r.floating ? resolveWall(zone, r.start).at : r.start;
      const end = r.floating ? resolveWall(zone, r.end).at : r.end;
      if (end > start ? at >= start && at < end : at === start) return { summary: r.summary, endDay: null, until: Math.max(end, at + 1) };
    }
    return null;
  }

  /**
   * Occurrences that can cover a local day of `year`: those starting by Jan 2
   * of the next year (a timed event's zone may be up to a day ahead of the
   * job's) and ending after Jan 1 of the year before (a day's margin each side).
   */
  private occurrences(year: number): YearOccurrences {
    let occ = this.years.get(year);
    if (occ !== undefined) return occ;
    occ = { days: [], times: [] };
    const from = Date.UTC(year - 1, 0, 1);
    const to = Date.UTC(year + 1, 0, 2);
    for (const m of this.events) {
      const push = (start: IcalTime, end: IcalTime, summary: string): void => {
        const s = wallOf(start);
        let e = wallOf(end);
        if (m.allDay) {
          if (e <= s) e = s + DAY_MS;
          occ!.days.push({ startDay: Math.floor(s / DAY_MS), endDay: Math.ceil(e / DAY_MS), summary });
        } else {
          occ!.times.push({ start: instantOf(m.zone, start, s), end: instantOf(m.zone, end, e), floating: m.zone.kind === "floating", summary });
        }
      };
      // An event longer than a year (a freeze, a sabbatical) that began before `from` still covers the year.
      const length = wallOf(m.event.endDate) - wallOf(m.event.startDate);
      if (!m.event.isRecurring()) {
        const s = wallOf(m.event.startDate);
        if (s <= to && s + length >= from) push(m.event.startDate, m.event.endDate, m.summary);
        continue;
      }
      const it = occurrences(m.event);
      for (let n = it.next(); n; n = it.next()) {
        const s = wallOf(n);
        if (s > to) break;
        if (s + length < from) continue;
        const d = m.event.getOccurrenceDetails(n);
        push(d.startDate, d.endDate, d.item.summary ?? m.summary);
      }
    }
    if (this.years.size > 200) this.years.clear();
    this.years.set(year, occ);
    return occ;
  }
}

/** An IcalTime's fields as a wall value (UTC epoch ms of the written date-time). */
function wallOf(t: IcalTime): number {
  return Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
}

function instantOf(zone: EventZone, t: IcalTime, wall: number): number {
  switch (zone.kind) {
    case "utc":
    case "floating":
      return wall;
    case "iana":
      return resolveWall(zoneInfo(zone.name), wall).at;
    case "vtimezone": {
      const copy = t.clone();
      copy.zone = zone.tz;
      return copy.toUnixTime() * 1000;
    }
  }
}

const parsed = new Map<string, IcsCalendar>();

/** The calendar of a file's text, memoised (a reload with the same text reuses it). */
export function calendarOf(text: string): IcsCalendar {
  let cal = parsed.get(text);
  if (cal === undefined) {
    const r = parseIcs(text, isValidZone);
    // The loader rejects broken files with their line; reaching this is a bug.
    if (!r.ok) throw new Error(`schedule: exclude calendar does not parse (line ${r.line}: ${r.message})`);
    cal = new IcsCalendar(r.events);
    if (parsed.size > 100) parsed.clear();
    parsed.set(text, cal);
  }
  return cal;
}
