import type { ScheduleSpec, TimeOfDay } from "../config/types.js";
import { firstRunDay } from "./calendar.js";
import { nextCronSlot } from "./cronRun.js";
import { exclusionAt, isEmptyExclude } from "./exclude.js";
import { resolveWall } from "./localTime.js";
import { DAY_MS, HOUR_MS, MINUTE_MS, localIso, pad2, zoneInfo, type ZoneInfo } from "./zone.js";

export { isValidZone, systemZone } from "./zone.js";

/**
 * The schedule seam (docs/ARCHITECTURE.md): when does a job run next.
 * Pure: no clock reads, no I/O; callers pass the instant to start after.
 */
export interface ScheduledSlot {
  /** Epoch ms of the instant. */
  at: number;
  /** "2027-03-14T07:00:00.000Z" */
  utc: string;
  /** "2027-03-14T03:00:00-04:00 EDT": ISO with offset, a space, the zone abbreviation. */
  local: string;
  /** "EDT"; Intl's en-US short name, which is "GMT+2" where en-US has no letters. */
  zoneAbbr: string;
  /** Set when a DST rule decided the instant; the daemon logs it as a warning. */
  note: string | null;
}

/** A slot with what `exclude` says of it: `svc next --all`, the scheduler's log, backfill. */
export interface Slot extends ScheduledSlot {
  /** Why this slot does not run ("2026-12-25 in holidays.ics: Christmas Day"), or null when it runs. */
  excluded: string | null;
}

/**
 * How far past the first slot a search for a runnable one goes before it says there is none (every slot
 * excluded). From the first slot, not from `afterMs`: a sparse schedule's first slot may be decades away
 * (a February 29 on a Monday) and still run.
 */
const SEARCH_YEARS_MS = 10 * 366 * DAY_MS;
/** ...and past this many slots: a schedule whose slots are decades apart (a February 29 on a Monday) has few in 10 years. */
const MIN_SLOTS_EXAMINED = 100;

/** The first slot strictly after `afterMs` that runs (not excluded); null for `manual` and `after:` jobs, and when exclude removes every slot it looks at. */
export function nextRun(spec: ScheduleSpec, afterMs: number): ScheduledSlot | null {
  let after = afterMs;
  const exclude = spec.exclude;
  let first: number | null = null;
  for (let examined = 1; ; examined++) {
    const slot = rawNext(spec, after);
    if (slot === null || isEmptyExclude(exclude)) return slot;
    const ex = exclusionAt(exclude!, zoneInfo(spec.timezone), slot.at);
    if (ex === null) return slot;
    first ??= slot.at;
    if (slot.at - first > SEARCH_YEARS_MS && examined >= MIN_SLOTS_EXAMINED) return null;
    after = Math.max(slot.at, ex.until - 1);
  }
}

/** The first slot strictly after `afterMs`, excluded or not; null for `manual` and `after:` jobs. */
export function nextSlot(spec: ScheduleSpec, afterMs: number): Slot | null {
  const slot = rawNext(spec, afterMs);
  if (slot === null) return null;
  const ex = isEmptyExclude(spec.exclude) ? null : exclusionAt(spec.exclude!, zoneInfo(spec.timezone), slot.at);
  slot.excluded = ex?.reason ?? null;
  return slot;
}

/** The next `count` runnable slots after `afterMs`, strictly increasing; [] for `manual` and `after:`. */
export function nextRuns(spec: ScheduleSpec, afterMs: number, count: number): ScheduledSlot[] {
  return following((after) => nextRun(spec, after), afterMs, count);
}

/** The next `count` slots after `afterMs`, excluded ones included and marked (`svc next --all`). */
export function nextSlots(spec: ScheduleSpec, afterMs: number, count: number): Slot[] {
  return following((after) => nextSlot(spec, after), afterMs, count);
}

/** Up to `count` slots, each the one `next` gives after the previous (the first after `afterMs`). */
function following<T extends { at: number }>(next: (afterMs: number) => T | null, afterMs: number, count: number): T[] {
  const out: T[] = [];
  let after = afterMs;
  while (out.length < count) {
    const slot = next(after);
    if (slot === null) break;
    out.push(slot);
    after = slot.at;
  }
  return out;
}

/**
 * Every slot in [fromMs, toMs), oldest first, excluded ones marked: the
 * enumeration backfill (CONTRACT §7.3) and `svc why` build on. At most
 * `limit` slots; `truncated` says whether more were left.
 */
export function slotsBetween(spec: ScheduleSpec, fromMs: number, toMs: number, limit = 10_000): { slots: Slot[]; truncated: boolean } {
  const slots: Slot[] = [];
  let after = fromMs - 1;
  for (;;) {
    const slot = nextSlot(spec, after);
    if (slot === null || slot.at >= toMs) return { slots, truncated: false };
    if (slots.length === limit) return { slots, truncated: true };
    slots.push(slot);
    after = slot.at;
  }
}

/** The next slot by the frequency alone, before `exclude` (a fresh object: callers may set `excluded`). */
function rawNext(spec: ScheduleSpec, afterMs: number): Slot | null {
  if (!Number.isFinite(afterMs)) throw new Error(`schedule: afterMs must be an epoch-ms number, got ${afterMs}`);
  switch (spec.frequency) {
    case "manual":
    case "after":
      return null;
    case "hourly":
      return nextHourly(zoneInfo(spec.timezone), afterMs);
    case "cron":
    case "every": {
      if (!spec.cron) throw new Error(`schedule: frequency "${spec.frequency}" needs its parsed expression`);
      const zone = zoneInfo(spec.timezone);
      const s = nextCronSlot(spec.cron, zone, afterMs);
      return makeSlot(zone, s.at, s.note);
    }
    default:
      return nextCalendar(spec, zoneInfo(spec.timezone), requireTime(spec), afterMs);
  }
}

/** One line for logs: "2027-03-14T07:00:00.000Z (03:00 EDT)", then " - <note>" when a DST rule applied. */
export function describeSlot(slot: ScheduledSlot): string {
  // local is "YYYY-MM-DDTHH:MM:SS±HH:MM ABBR"; show the local date only when it differs from the UTC one.
  const localDate = slot.local.slice(0, 10);
  const clock = `${slot.local.slice(11, 16)} ${slot.zoneAbbr}`;
  const where = localDate === slot.utc.slice(0, 10) ? clock : `${localDate} ${clock}`;
  return `${slot.utc} (${where})${slot.note === null ? "" : ` - ${slot.note}`}`;
}

function requireTime(spec: ScheduleSpec): TimeOfDay {
  if (spec.time === null) throw new Error(`schedule: frequency "${spec.frequency}" needs a time (HHMM)`);
  return spec.time;
}

/** daily, weekly, monthly, weekdays, weekends: `time` on the frequency's days. */
function nextCalendar(spec: ScheduleSpec, zone: ZoneInfo, time: TimeOfDay, afterMs: number): Slot {
  const timeMs = time.hour * HOUR_MS + time.minute * MINUTE_MS;
  // Starting at the local day of afterMs is enough: an earlier day's slot
  // resolves to an instant no later than afterMs's own wall time, because
  // resolution is monotonic in wall time.
  let day = Math.floor((afterMs + zone.offsetMs(afterMs)) / DAY_MS);
  for (let guard = 0; guard < 1000; guard++) {
    day = firstRunDay(spec, day);
    const wall = day * DAY_MS + timeMs;
    const r = resolveWall(zone, wall);
    if (r.at > afterMs) {
      let note: string | null = null;
      if (r.kind === "gap") {
        note = `${hhmm(wall)} does not exist (DST gap): runs at ${hhmm(r.at + zone.offsetMs(r.at))}`;
      } else if (r.kind === "overlap") {
        note = `${hhmm(wall)} occurs twice (DST overlap): runs once, at the first (${zone.abbreviation(r.at)})`;
      }
      return makeSlot(zone, r.at, note);
    }
    day += 1;
  }
  throw new Error(`schedule: no run found after ${new Date(afterMs).toISOString()} in ${zone.name}`);
}

/**
 * hourly: every instant at which the zone's clock reads minute 00. It is a
 * period, so both 01:00s of a fall-back night run, and an hour whose :00 a
 * gap swallows has no run (CONTRACT §3).
 */
function nextHourly(zone: ZoneInfo, afterMs: number): Slot {
  let from = afterMs + 1;
  for (let guard = 0; guard < 1000; guard++) {
    const seg = zone.segmentAt(from);
    // Smallest instant >= from whose wall time is a whole hour in this segment.
    const at = from + mod(-(from + seg.offsetMs), HOUR_MS);
    if (at < seg.end) return makeSlot(zone, at, hourlyNote(zone, at + seg.offsetMs));
    from = seg.end;
  }
  throw new Error(`schedule: no hourly run found after ${new Date(afterMs).toISOString()} in ${zone.name}`);
}

function hourlyNote(zone: ZoneInfo, wall: number): string | null {
  const here = resolveWall(zone, wall);
  if (here.kind === "overlap") {
    return `${hhmm(wall)} occurs twice (DST overlap): hourly runs at both (${zone.abbreviation(here.at)} and ${zone.abbreviation(here.later)})`;
  }
  const previous = wall - HOUR_MS;
  if (resolveWall(zone, previous).kind === "gap") {
    return `${hhmm(previous)} does not exist (DST gap): no run for that hour`;
  }
  return null;
}

/**
 * The strings (`utc`, `local`, `zoneAbbr`) are formatted when first read:
 * the scheduler computes a slot each time a job fires (every second for
 * every:1s) and the planner needs only `at`; views and the store read the
 * rest. They are enumerable accessors, so spreading or serialising a slot
 * gives them as values.
 */
function makeSlot(zone: ZoneInfo, at: number, note: string | null): Slot {
  let utc: string | undefined;
  let zoneAbbr: string | undefined;
  let local: string | undefined;
  return {
    at,
    note,
    excluded: null,
    get utc(): string {
      return (utc ??= new Date(at).toISOString());
    },
    get zoneAbbr(): string {
      return (zoneAbbr ??= zone.abbreviation(at));
    },
    get local(): string {
      return (local ??= localIso(zone, at));
    },
  };
}

function hhmm(wall: number): string {
  const minutes = Math.floor(mod(wall, DAY_MS) / MINUTE_MS);
  return `${pad2(Math.floor(minutes / 60))}:${pad2(minutes % 60)}`;
}

function mod(a: number, n: number): number {
  return ((a % n) + n) % n;
}
