import { IANAZone } from "luxon";

/**
 * A brute-force reference for `cron:`/`every:` slots, written from CONTRACT
 * §7.1 and independent of src/schedule and src/config: its own reading of
 * the expression, its own offsets (raw luxon, transitions found by scanning),
 * and the rules in their plainest form:
 *
 * - periodic: walk the instants second by second (minute by minute without
 *   a seconds field); a slot is every instant whose wall clock matches;
 * - fixed-time: walk the wall clock; each matching wall time runs at its
 *   first occurrence, or, when the clock never shows it (a gap), at the
 *   first instant after the gap; one run per instant.
 *
 * Walks skip whole local days whose date cannot match, which changes no
 * result. Assumes offsets change on whole minutes (true of every zone used).
 */

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const MACROS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@hourly": "0 * * * *",
};

export interface OracleCron {
  sec: Set<number>;
  min: Set<number>;
  hour: Set<number>;
  dom: Set<number>;
  lastDom: boolean;
  month: Set<number>;
  dow: Set<number>;
  lastDow: Set<number>;
  nthDow: Set<string>; // "weekday#n"
  domStar: boolean;
  dowStar: boolean;
  fixed: boolean;
  stepMs: number;
}

/** `cron:` text (or `every:10s`) read literally. */
export function readCron(text: string): OracleCron {
  let expr = text;
  if (text.startsWith("every:")) {
    const m = /^every:(\d+)([smh])$/.exec(text)!;
    expr = m[2] === "s" ? `*/${m[1]} * * * * *` : m[2] === "m" ? `*/${m[1]} * * * *` : `0 */${m[1]} * * *`;
  }
  expr = MACROS[expr.toLowerCase()] ?? expr;
  let f = expr.trim().split(/\s+/);
  const hasSeconds = f.length === 6;
  if (!hasSeconds) f = ["0", ...f];
  const [s, mi, h, dom, mo, dow] = f as [string, string, string, string, string, string];
  const out: OracleCron = {
    sec: expand(s, 0, 59),
    min: expand(mi, 0, 59),
    hour: expand(h, 0, 23),
    dom: new Set(),
    lastDom: false,
    month: expand(mo, 1, 12, MONTHS, 1),
    dow: new Set(),
    lastDow: new Set(),
    nthDow: new Set(),
    domStar: dom.startsWith("*"),
    dowStar: dow.startsWith("*"),
    fixed: !mi.startsWith("*") && !h.startsWith("*"),
    stepMs: hasSeconds ? 1000 : 60_000,
  };
  for (const item of dom.split(",")) {
    if (item.toUpperCase() === "L") out.lastDom = true;
    else for (const v of expand(item, 1, 31)) out.dom.add(v);
  }
  for (const item of dow.split(",")) {
    const last = /^(\w+?)L$/i.exec(item);
    const nth = /^(\w+)#(\d)$/.exec(item);
    if (last) out.lastDow.add(dayValue(last[1]!));
    else if (nth) out.nthDow.add(`${dayValue(nth[1]!)}#${nth[2]}`);
    else for (const v of expand(item, 0, 7, DAYS, 0)) out.dow.add(v % 7);
  }
  return out;
}

function dayValue(t: string): number {
  const i = DAYS.indexOf(t.toLowerCase());
  return (i >= 0 ? i : Number(t)) % 7;
}

function expand(field: string, min: number, max: number, names: string[] = [], base = 0): Set<number> {
  const out = new Set<number>();
  const val = (t: string) => {
    const i = names.indexOf(t.toLowerCase());
    return i >= 0 ? i + base : Number(t);
  };
  for (const item of field.split(",")) {
    const [range, step] = item.split("/");
    let lo = min;
    let hi = max === 7 ? 6 : max;
    if (range !== "*") {
      const [a, b] = range!.split("-");
      lo = val(a!);
      hi = b !== undefined ? val(b) : step !== undefined ? hi : lo;
    }
    for (let v = lo; v <= hi; v += step === undefined ? 1 : Number(step)) out.add(v);
  }
  return out;
}

function dayMatches(c: OracleCron, d: Date): boolean {
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const day = d.getUTCDate();
  const wd = d.getUTCDay();
  const dim = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  const domHit = c.dom.has(day) || (c.lastDom && day === dim);
  const dowHit = c.dow.has(wd) || (c.lastDow.has(wd) && day > dim - 7) || c.nthDow.has(`${wd}#${Math.floor((day - 1) / 7) + 1}`);
  const dayOk = !c.domStar && !c.dowStar ? domHit || dowHit : domHit && dowHit;
  return dayOk && c.month.has(m + 1);
}

function wallMatches(c: OracleCron, wall: number): boolean {
  const d = new Date(wall);
  return c.sec.has(d.getUTCSeconds()) && c.min.has(d.getUTCMinutes()) && c.hour.has(d.getUTCHours()) && dayMatches(c, d);
}

const DAY = 86_400_000;

/** Offsets of one zone from raw luxon, transitions found by daily scan and bisection to the second. */
export class OracleZone {
  /** [instant of change, offset from then on] in order; the first entry covers everything before. */
  readonly changes: [number, number][] = [];

  constructor(
    readonly name: string,
    from: number,
    to: number,
  ) {
    const zone = IANAZone.create(name);
    const raw = (t: number) => Math.round(zone.offset(t) * 60_000);
    let prev = raw(from);
    this.changes.push([-Infinity, prev]);
    for (let t = from + DAY; t <= to; t += DAY) {
      const cur = raw(t);
      if (cur === prev) continue;
      let lo = t - DAY;
      let hi = t;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (raw(mid) === prev) lo = mid;
        else hi = mid;
      }
      this.changes.push([hi, cur]);
      prev = cur;
    }
  }

  offset(t: number): number {
    let o = this.changes[0]![1];
    for (const [at, off] of this.changes) {
      if (at > t) break;
      o = off;
    }
    return o;
  }

  wall(t: number): number {
    return t + this.offset(t);
  }

  /** Transitions (not the first pseudo-entry): [instant, before, after]. */
  transitions(): [number, number, number][] {
    return this.changes.slice(1).map(([at, off], i) => [at, this.changes[i]![1], off]);
  }

  /** §3 literally: the first instant whose wall clock reads `wall`, else (a gap) the first instant after the gap. */
  place(wall: number): number {
    const found: number[] = [];
    for (const [, off] of this.changes) {
      const t = wall - off;
      if (this.offset(t) === off) found.push(t);
    }
    if (found.length > 0) return Math.min(...found);
    for (const [at, before, after] of this.transitions()) {
      if (wall >= at + before && wall < at + after) return at;
    }
    throw new Error(`oracle: cannot place ${new Date(wall).toISOString()} in ${this.name}`);
  }

  /** The next instant > t at which the offset changes, or Infinity. */
  nextChange(t: number): number {
    for (const [at] of this.changes) if (at > t) return at;
    return Infinity;
  }
}

/** The first `count` slots strictly after `from` (epoch ms), before `until`, and whether dates excluded any. */
export function oracleSlots(c: OracleCron, zone: OracleZone, from: number, count: number, until = Infinity, excludeDates: ReadonlySet<string> = new Set()): number[] {
  const all = c.fixed ? fixedSlots(c, zone, from, count, until, excludeDates) : periodicSlots(c, zone, from, count, until, excludeDates);
  return all;
}

function excluded(zone: OracleZone, t: number, dates: ReadonlySet<string>): boolean {
  return dates.size > 0 && dates.has(new Date(zone.wall(t)).toISOString().slice(0, 10));
}

function periodicSlots(c: OracleCron, zone: OracleZone, from: number, count: number, until: number, dates: ReadonlySet<string>): number[] {
  const out: number[] = [];
  let t = Math.floor(from / c.stepMs) * c.stepMs + c.stepMs;
  while (out.length < count && t < until) {
    const wall = zone.wall(t);
    if (!dayMatches(c, new Date(wall))) {
      // Skip to the next local midnight, but never past a change of offset (a fold may bring a matching day back).
      const nextMidnight = t + (Math.floor(wall / DAY) + 1) * DAY - wall;
      t = Math.min(nextMidnight, Math.ceil(zone.nextChange(t) / c.stepMs) * c.stepMs);
      continue;
    }
    if (wallMatches(c, wall) && !excluded(zone, t, dates)) out.push(t);
    t += c.stepMs;
  }
  return out;
}

function fixedSlots(c: OracleCron, zone: OracleZone, from: number, count: number, until: number, dates: ReadonlySet<string>): number[] {
  const out: number[] = [];
  // Walls well before `from`: a gap's wall may run after `from`.
  let day = Math.floor((zone.wall(from) - DAY) / DAY);
  for (let guard = 0; guard < 366 * 30 && out.length < count; guard++, day++) {
    const date = new Date(day * DAY);
    if (!dayMatches(c, date)) continue;
    for (let s = 0; s < DAY && out.length < count; s += c.stepMs) {
      const wall = day * DAY + s;
      if (!wallMatches(c, wall)) continue;
      const t = zone.place(wall);
      if (t >= until) return out;
      if (t <= from || out.includes(t) || excluded(zone, t, dates)) continue;
      out.push(t);
    }
  }
  return out.sort((a, b) => a - b);
}
