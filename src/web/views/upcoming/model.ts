/**
 * The Upcoming view's pure parts: slots grouped by day in the browser's
 * zone or in each job's own, the DST change of a day, times in a zone. No
 * DOM; zones through Intl (test/web/upcomingModel.test.ts).
 */

export interface UpSlot {
  job: string;
  /** ISO UTC. */
  at: string;
  /** In the job's zone: "2027-03-14T03:00:00-04:00 EDT". */
  local: string;
  zone_abbr: string;
  note: string | null;
  excluded: string | null;
}

export interface UpJob {
  name: string;
  timezone: string;
  frequency: string;
  paused: boolean;
  slots: number;
  more: boolean;
}

export interface UpcomingAnswer {
  from: string;
  to: string;
  days: number;
  truncated: boolean;
  jobs: UpJob[];
  unscheduled: number;
  slots: UpSlot[];
}

export type ZoneMode = "browser" | "job";

export type Row =
  | { kind: "day"; key: string; label: string; notes: string[] }
  | { kind: "slot"; key: string; slot: UpSlot; job: UpJob | undefined; time: string; /** The other zone's reading, when it differs. */ also: string | null };

const fmtCache = new Map<string, Intl.DateTimeFormat>();
function fmt(zone: string, opts: Intl.DateTimeFormatOptions, key: string): Intl.DateTimeFormat {
  const k = `${zone}|${key}`;
  let f = fmtCache.get(k);
  if (!f) fmtCache.set(k, (f = new Intl.DateTimeFormat("en-US", { timeZone: zone, ...opts })));
  return f;
}

/** The zone's offset from UTC at `ms`, in minutes (east positive). */
export function offsetMinutes(zone: string, ms: number): number {
  const name = fmt(zone, { timeZoneName: "longOffset" }, "off").formatToParts(ms).find((p) => p.type === "timeZoneName")?.value ?? "GMT";
  const m = /GMT([+-])(\d{2}):?(\d{2})?/.exec(name);
  if (!m) return 0;
  return (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0));
}

/** "2027-03-14": the local date of `ms` in `zone`. */
export function dayKey(zone: string, ms: number): string {
  const p = fmt(zone, { year: "numeric", month: "2-digit", day: "2-digit" }, "day").formatToParts(ms);
  const get = (t: string) => p.find((x) => x.type === t)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")}`;
}

/** "EST", "EDT"; "GMT+1" where en-US has no letters (as the schedule code). */
export function zoneAbbr(zone: string, ms: number): string {
  return fmt(zone, { timeZoneName: "short" }, "abbr").formatToParts(ms).find((p) => p.type === "timeZoneName")?.value ?? zone;
}

/** The instant local midnight of `day` ("2027-03-14") begins in `zone` (the first instant of that date). */
export function startOfDay(zone: string, day: string): number {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  const wall = Date.UTC(y, m - 1, d);
  let t = wall - offsetMinutes(zone, wall) * 60_000;
  t = wall - offsetMinutes(zone, t) * 60_000;
  // Midnight may not exist (a gap at 00:00): the day then begins at the gap's end.
  if (dayKey(zone, t) !== day) t += 3_600_000;
  return t;
}

const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

/** "Clocks go forward 1 h in America/New_York (EST → EDT)" when `zone` changes its offset during `day`. */
export function dstNote(zone: string, day: string): string | null {
  const a = startOfDay(zone, day);
  const b = startOfDay(zone, nextDay(day)) - 1;
  const before = offsetMinutes(zone, a);
  const after = offsetMinutes(zone, b);
  if (before === after) return null;
  const diff = Math.abs(after - before);
  const amount = diff % 60 === 0 ? `${diff / 60} h` : `${diff} min`;
  return `Clocks go ${after > before ? "forward" : "back"} ${amount} in ${zone} (${zoneAbbr(zone, a)} → ${zoneAbbr(zone, b)})`;
}

const dayLabelFmt = new Map<string, Intl.DateTimeFormat>();
/** "Sunday, March 14, 2027" in the page's locale. */
export function dayLabel(day: string, locale?: string): string {
  const k = locale ?? "";
  let f = dayLabelFmt.get(k);
  if (!f) dayLabelFmt.set(k, (f = new Intl.DateTimeFormat(locale, { dateStyle: "full", timeZone: "UTC" })));
  return f.format(Date.parse(`${day}T12:00:00Z`));
}

/** "03:00" in `zone` (24-hour, the way schedules are written). */
export function clock(zone: string, ms: number): string {
  return fmt(zone, { hour: "2-digit", minute: "2-digit", hourCycle: "h23" }, "clock").format(ms);
}

/**
 * The table's rows: a heading per day, then that day's slots. `browser`:
 * days and times in the browser's zone, the job's own reading beside them
 * when it differs; `job`: each slot on the day and at the time of its job's
 * zone (as written in svc.yaml). A day notes each DST change it holds in a
 * zone it shows.
 */
export function buildRows(answer: UpcomingAnswer, mode: ZoneMode, browserZone: string, showExcluded: boolean, locale?: string): Row[] {
  const jobs = new Map(answer.jobs.map((j) => [j.name, j]));
  const byDay = new Map<string, { slot: UpSlot; time: string; also: string | null; zone: string }[]>();
  for (const slot of answer.slots) {
    if (!showExcluded && slot.excluded) continue;
    const ms = Date.parse(slot.at);
    const job = jobs.get(slot.job);
    const jobZone = job?.timezone ?? browserZone;
    const jobTime = `${slot.local.slice(11, 16)} ${slot.zone_abbr}`;
    let day: string;
    let time: string;
    let also: string | null;
    let zone: string;
    if (mode === "job") {
      day = slot.local.slice(0, 10);
      time = jobTime;
      zone = jobZone;
      also = jobZone === browserZone ? null : `${clock(browserZone, ms)} ${zoneAbbr(browserZone, ms)} here`;
    } else {
      day = dayKey(browserZone, ms);
      time = clock(browserZone, ms);
      zone = browserZone;
      also = jobZone === browserZone ? null : `${jobTime} in ${jobZone}`;
    }
    let list = byDay.get(day);
    if (!list) byDay.set(day, (list = []));
    list.push({ slot, time, also, zone });
  }
  const rows: Row[] = [];
  for (const day of [...byDay.keys()].sort()) {
    const list = byDay.get(day)!;
    const zones = [...new Set(list.map((x) => x.zone))].sort();
    const notes = zones.map((z) => dstNote(z, day)).filter((n): n is string => n !== null);
    rows.push({ kind: "day", key: `d${day}`, label: dayLabel(day, locale), notes });
    // Within a day, by instant (job-zone days can interleave zones).
    list.sort((a, b) => Date.parse(a.slot.at) - Date.parse(b.slot.at) || (a.slot.job < b.slot.job ? -1 : 1));
    for (const x of list) rows.push({ kind: "slot", key: `s${x.slot.job}|${x.slot.at}`, slot: x.slot, job: jobs.get(x.slot.job), time: x.time, also: x.also });
  }
  return rows;
}
