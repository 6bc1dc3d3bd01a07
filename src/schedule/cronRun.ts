import type { CronSpec } from "../config/types.js";
import { compileCron, nextWallMatch, type CompiledCron } from "./cronMatch.js";
import { resolveWall } from "./localTime.js";
import { DAY_MS, HOUR_MS, MINUTE_MS, pad2, type ZoneInfo } from "./zone.js";

/**
 * The next slot of a `cron:`/`every:` schedule: CONTRACT §7.1's DST rule,
 * Vixie cron's split, written out.
 *
 * - Fixed-time (neither minute nor hour starts with `*`): each matching wall
 *   time is placed by §3's rule (resolveWall: gap -> the transition, overlap
 *   -> the first occurrence), and slots landing on one instant run once.
 *   Equivalently: the slot after `from` is the first matching wall time
 *   strictly later than the latest wall time the clock has shown up to
 *   `from` (`clockHigh`), placed by resolveWall. That single comparison
 *   gives both "once" rules: a wall already shown (the first pass of a
 *   fold, or a gap's walls once the transition has passed) is never next.
 * - Periodic: a slot is every instant at which the clock, as it reads,
 *   matches. Walls inside a gap never occur (no run); walls in a fold occur
 *   twice (two runs), like `hourly`.
 */
export interface CronSlot {
  at: number;
  note: string | null;
}

/** Larger than any DST shift (2 h at most in the tz database) plus a day block. */
const LOOKBACK_MS = 26 * HOUR_MS;
/** Shorter than the 95 hours between any two offset changes (zone.ts). */
const FAST_WINDOW_MS = 72 * HOUR_MS;

export function nextCronSlot(spec: CronSpec, zone: ZoneInfo, afterMs: number): CronSlot {
  const c = compileCron(spec);
  return spec.fixedTime ? nextFixed(c, zone, afterMs) : nextPeriodic(c, zone, afterMs);
}

function nextFixed(c: CompiledCron, zone: ZoneInfo, afterMs: number): CronSlot {
  const wall = nextWallMatch(c, clockHigh(zone, afterMs) + 1);
  if (wall === null) throw noMatch(c, zone, afterMs);
  const r = resolveWall(zone, wall);
  let note: string | null = null;
  if (r.kind === "gap") {
    note = `${clock(wall, c)} does not exist (DST gap): runs at ${clock(r.at + zone.offsetMs(r.at), c)}`;
  } else if (r.kind === "overlap") {
    note = `${clock(wall, c)} occurs twice (DST overlap): runs once, at the first (${zone.abbreviation(r.at)})`;
  }
  return { at: r.at, note };
}

/** The latest wall time the zone's clock has read at any instant <= t (ms). */
export function clockHigh(zone: ZoneInfo, t: number): number {
  const offset = zone.offsetMs(t);
  let high = t + offset;
  // Offsets change at most once in 95 hours (zone.ts): equal offsets at both ends mean no change in between.
  if (zone.offsetMs(t - LOOKBACK_MS) === offset) return high;
  for (const s of zone.segments(t - LOOKBACK_MS, t)) {
    if (s.end <= t) high = Math.max(high, s.end - 1 + s.offsetMs);
  }
  return high;
}

function nextPeriodic(c: CompiledCron, zone: ZoneInfo, afterMs: number): CronSlot {
  let from = afterMs + 1;
  // Fast path: a slot within 3 days with the offset of `from` (no change fits between: zone.ts's invariant).
  const offset = zone.offsetMs(from);
  const wall = nextWallMatch(c, from + offset);
  if (wall !== null && wall - offset - from < FAST_WINDOW_MS && zone.offsetMs(wall - offset) === offset) {
    const at = wall - offset;
    return { at, note: quietAround(zone, at, offset) ? null : periodicNote(c, zone, at, wall) };
  }
  // The first match beyond the segment it was looked for in, and where it was looked from (see below).
  let anchor: { from: number; wall: number } | null = null;
  for (let guard = 0; guard < 10_000; guard++) {
    const seg = zone.segmentAt(from);
    const wall = nextWallMatch(c, from + seg.offsetMs);
    if (wall === null) break;
    const at = wall - seg.offsetMs;
    if (at < seg.end) return { at, note: quietAround(zone, at, seg.offsetMs) ? null : periodicNote(c, zone, at, wall) };
    anchor ??= { from, wall };
    from = seg.end;
    // Segments may be a day long, and the next match years away (a February 29 on a Monday): walking
    // them one by one gave up after ~27 years. A match at an instant more than OFFSET_SPAN after the
    // anchor's `from` has a wall time at or after the anchor's (an earlier wall there would have been
    // found from the anchor), so it is no earlier than that wall less the largest offset: jump there.
    if (from >= anchor.from + OFFSET_SPAN_MS && anchor.wall - MAX_OFFSET_MS > from) {
      from = anchor.wall - MAX_OFFSET_MS;
      anchor = null;
    }
  }
  throw noMatch(c, zone, afterMs);
}

/** More than the widest gap between two UTC offsets (-12 h to +14 h, local mean times included). */
const OFFSET_SPAN_MS = 48 * HOUR_MS;
/** More than the largest UTC offset (+14 h; a few local mean times were a little over). */
const MAX_OFFSET_MS = 24 * HOUR_MS;

/** No offset change within a day before `at` nor DST's span after it: no note can apply. */
function quietAround(zone: ZoneInfo, at: number, offset: number): boolean {
  return zone.offsetMs(at - LOOKBACK_MS) === offset && zone.offsetMs(at + 3 * HOUR_MS) === offset;
}

/** In a fold: both passes run. First slot after a gap that swallowed matching walls: say so. */
function periodicNote(c: CompiledCron, zone: ZoneInfo, at: number, wall: number): string | null {
  // Merged over the day before: the last segment starts at the last change, if there was one.
  const segs = zone.segments(at - LOOKBACK_MS, at);
  const seg = segs[segs.length - 1]!;
  const segStart = seg.start;
  const offsetMs = seg.offsetMs;
  const r = resolveWall(zone, wall);
  if (r.kind === "overlap") {
    return `${clock(wall, c)} occurs twice (DST overlap): a periodic schedule runs at both (${zone.abbreviation(r.at)} and ${zone.abbreviation(r.later)})`;
  }
  const before = zone.offsetMs(segStart - 1);
  if (before >= offsetMs) return null; // the segment starts after a fold, not a gap
  const gapFrom = segStart + before;
  const gapTo = segStart + offsetMs;
  const swallowed = nextWallMatch(c, gapFrom);
  // Only on the first slot after the gap.
  if (swallowed === null || swallowed >= gapTo || nextWallMatch(c, gapTo) !== wall) return null;
  // With its date: the slot this note is on may be days later (`*/30 2 8-14 3 *`), and a gap may be a whole day (Pacific/Apia, 2011).
  const dayFrom = new Date(gapFrom).toISOString().slice(0, 10);
  const dayTo = new Date(gapTo).toISOString().slice(0, 10);
  const span = dayFrom === dayTo ? `${dayFrom} ${clock(gapFrom, c)}-${clock(gapTo, c)}` : `${dayFrom} ${clock(gapFrom, c)} to ${dayTo} ${clock(gapTo, c)}`;
  return `${span} does not exist (DST gap): no runs in it`;
}

function noMatch(c: CompiledCron, zone: ZoneInfo, afterMs: number): Error {
  return new Error(`schedule: cron:${c.spec.source} has no slot after ${new Date(afterMs).toISOString()} in ${zone.name}`);
}

/** "02:30", or "02:30:15" when the expression has seconds other than 0. */
function clock(wall: number, c: CompiledCron): string {
  const ms = ((wall % DAY_MS) + DAY_MS) % DAY_MS;
  const h = Math.floor(ms / HOUR_MS);
  const m = Math.floor((ms % HOUR_MS) / MINUTE_MS);
  const s = Math.floor((ms % MINUTE_MS) / 1000);
  const withSeconds = c.spec.seconds.length !== 1 || c.spec.seconds[0] !== 0;
  return `${pad2(h)}:${pad2(m)}${withSeconds ? `:${pad2(s)}` : ""}`;
}
