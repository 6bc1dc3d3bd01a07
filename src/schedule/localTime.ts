import { HOUR_MS, type ZoneInfo } from "./zone.js";

/**
 * Turning a local wall-clock time into an instant, with svc's own DST rules
 * (CONTRACT §3), written out here instead of taken from luxon, whose defaults
 * differ (it moves a gap time forward by the gap's length and picks the
 * second occurrence of an ambiguous time):
 *
 * - a wall time that occurs once maps to that instant;
 * - a wall time that occurs twice (overlap) maps to its FIRST occurrence;
 * - a wall time that never occurs (gap) maps to the first instant after the
 *   gap, i.e. the transition itself (02:30 on New York's spring-forward day
 *   runs at 03:00 EDT).
 *
 * Equivalently: the instant at which the zone's clock first reads at least
 * that wall time. The property tests check this definition by brute force.
 *
 * A "wall" value is the local date-time written as if it were UTC epoch ms
 * (Date.UTC(y, m - 1, d, h, min)); instant = wall - offset.
 */
export type Resolution =
  | { kind: "exact"; at: number }
  | { kind: "overlap"; at: number; later: number }
  | { kind: "gap"; at: number };

/** Larger than any UTC offset in the tz database (LMT of Asia/Manila is -15:56). */
const SEARCH_MS = 18 * HOUR_MS;

export function resolveWall(zone: ZoneInfo, wall: number): Resolution {
  const segs = zone.segments(wall - SEARCH_MS, wall + SEARCH_MS);
  // null, not -1, for "none": an instant before 1970 is a negative number.
  let first: number | null = null;
  let second: number | null = null;
  let gapAt: number | null = null;
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    const at = wall - s.offsetMs;
    if (at >= s.start && at < s.end) {
      if (first === null) first = at;
      else if (second === null) second = at;
    } else if (i > 0) {
      // Between segment i-1 and i the clock jumps from (start + previous
      // offset) to (start + this offset); a forward jump skips those walls.
      const prev = segs[i - 1]!;
      if (wall >= s.start + prev.offsetMs && wall < s.start + s.offsetMs && gapAt === null) gapAt = s.start;
    }
  }
  if (first !== null) return second !== null ? { kind: "overlap", at: first, later: second } : { kind: "exact", at: first };
  if (gapAt !== null) return { kind: "gap", at: gapAt };
  throw new Error(`schedule: cannot place wall time ${new Date(wall).toISOString()} in ${zone.name}`);
}
