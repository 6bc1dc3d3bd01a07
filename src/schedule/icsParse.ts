import { createRequire } from "node:module";
import type ICALModule from "ical.js";

/**
 * Reading an iCalendar file of `exclude.calendar` (CONTRACT §7.1) with
 * ical.js (RFC 5545: RRULE, RDATE, EXDATE and RECURRENCE-ID exceptions are
 * its work), and checking every event once, so that a broken file is a
 * config error with its line rather than a surprise at run time.
 *
 * ical.js (270 KB) is loaded on first use only: `svc validate` of a project
 * without a calendar never pays for it. Nothing here reads the zone data
 * (luxon) either; icsCalendar.ts places the events in time.
 */
export type Ical = typeof ICALModule;
export type IcalEvent = InstanceType<Ical["Event"]>;
export type IcalTime = InstanceType<Ical["Time"]>;
export type IcalTimezone = InstanceType<Ical["Timezone"]>;
type IcalComponent = InstanceType<Ical["Component"]>;

let loaded: Ical | null = null;

export function ical(): Ical {
  loaded ??= createRequire(import.meta.url)("ical.js") as Ical;
  return loaded;
}

/**
 * How many candidates in a row an RRULE may reject before it is called impossible. ical.js steps a
 * DAILY (HOURLY, ...) rule one period at a time until its BY parts match, with no end: BY parts that
 * never match together (`FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31`) would hang the loader and the daemon.
 * A daily rule meets any day there is within 1,500 steps (a February 29), an hourly one within 36,000.
 */
const MAX_MISSES = 100_000;

type RuleIterator = { check_contracting_rules(): boolean };

/** The event's occurrences, as `event.iterator()`, but an RRULE that finds none in MAX_MISSES steps throws. */
export function occurrences(event: IcalEvent): ReturnType<IcalEvent["iterator"]> {
  const it = event.iterator();
  for (const rule of (it as unknown as { ruleIterators?: RuleIterator[] }).ruleIterators ?? []) {
    const check = rule.check_contracting_rules.bind(rule);
    let misses = 0;
    rule.check_contracting_rules = () => {
      if (check()) {
        misses = 0;
        return true;
      }
      if (++misses > MAX_MISSES) {
        throw new Error(`its RRULE finds no occurrence in ${MAX_MISSES.toLocaleString("en")} steps: its BY parts never match together (e.g. BYMONTH=4;BYMONTHDAY=31)`);
      }
      return false;
    };
  }
  return it;
}

export interface IcsProblem {
  line: number;
  message: string;
}

export type EventZone = { kind: "utc" } | { kind: "floating" } | { kind: "iana"; name: string } | { kind: "vtimezone"; tz: IcalTimezone };

export interface EventModel {
  event: IcalEvent;
  summary: string;
  allDay: boolean;
  zone: EventZone;
}

/**
 * Parses and checks every event (dates, zones, recurrence rules); the first
 * problem with its line. `isZone` says whether a TZID is an IANA zone.
 */
export function parseIcs(text: string, isZone: (name: string) => boolean): { ok: true; events: EventModel[] } | ({ ok: false } & IcsProblem) {
  const ICAL = ical();
  const lines = contentLines(text);
  const structural = checkStructure(lines);
  if (structural) return { ok: false, ...structural };
  let root: IcalComponent;
  try {
    const jcal = ICAL.parse(text) as unknown[];
    root = new ICAL.Component((Array.isArray(jcal[0]) ? jcal[0] : jcal) as never);
  } catch (e) {
    return { ok: false, line: lineOfParserError(e, lines), message: errorText(e) };
  }
  const veventLines = lines.filter((l) => /^BEGIN:VEVENT$/i.test(l.text)).map((l) => l.line);
  const timezones = new Map<string, IcalTimezone>();
  for (const vtz of root.getAllSubcomponents("vtimezone")) {
    const tzid = vtz.getFirstPropertyValue("tzid");
    if (typeof tzid === "string") timezones.set(tzid, new ICAL.Timezone(vtz));
  }
  const vevents = root.getAllSubcomponents("vevent");
  const masters = new Map<string, IcalEvent>();
  const exceptions: IcalEvent[] = [];
  const events: EventModel[] = [];
  for (let i = 0; i < vevents.length; i++) {
    const ve = vevents[i]!;
    const line = veventLines[i] ?? 0;
    const where = (prop: string): number => propertyLine(lines, line, prop);
    if (!ve.hasProperty("dtstart")) return { ok: false, line, message: "VEVENT has no DTSTART" };
    let model: EventModel;
    try {
      const event = new ICAL.Event(ve);
      const start = event.startDate;
      void event.endDate;
      const zone = eventZone(ve, start, timezones, isZone);
      if (typeof zone === "string") return { ok: false, line: where("DTSTART"), message: zone };
      model = { event, summary: event.summary ?? "(no summary)", allDay: start.isDate, zone };
    } catch (e) {
      return { ok: false, line: where(failingProperty(ve) ?? "DTSTART"), message: errorText(e) };
    }
    try {
      if (model.event.isRecurring()) {
        const it = occurrences(model.event);
        it.next();
        it.next();
      }
    } catch (e) {
      return { ok: false, line: where(failingProperty(ve) ?? "RRULE"), message: errorText(e) };
    }
    if (model.event.isRecurrenceException()) exceptions.push(model.event);
    else masters.set(model.event.uid, model.event);
    events.push(model);
  }
  // A RECURRENCE-ID event replaces one occurrence of its master (same UID); without a master it stands alone.
  const standalone = new Set(events.map((e) => e.event));
  for (const ex of exceptions) {
    const master = masters.get(ex.uid);
    if (master) {
      master.relateException(ex);
      standalone.delete(ex);
    }
  }
  return { ok: true, events: events.filter((e) => standalone.has(e.event)) };
}

/** Where an event's times live; a string is the problem with its TZID. */
function eventZone(
  ve: IcalComponent,
  start: IcalTime,
  timezones: Map<string, IcalTimezone>,
  isZone: (name: string) => boolean,
): EventZone | string {
  if (start.isDate) return { kind: "floating" };
  const tzid = ve.getFirstProperty("dtstart")?.getParameter("tzid");
  if (typeof tzid === "string" && tzid !== "") {
    const own = timezones.get(tzid);
    if (own) return { kind: "vtimezone", tz: own };
    if (isZone(tzid)) return { kind: "iana", name: tzid };
    return `DTSTART has TZID "${tzid}", which is neither an IANA time zone nor a VTIMEZONE of this file`;
  }
  return start.zone?.tzid === "UTC" ? { kind: "utc" } : { kind: "floating" };
}

interface ContentLine {
  line: number;
  text: string;
}

/** Unfolded content lines (RFC 5545 §3.1: a line starting with a space or tab continues the previous one). */
function contentLines(text: string): ContentLine[] {
  const out: ContentLine[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    if ((raw.startsWith(" ") || raw.startsWith("\t")) && out.length > 0) out[out.length - 1]!.text += raw.slice(1);
    else if (raw !== "") out.push({ line: i + 1, text: raw });
  });
  return out;
}

/** BEGIN/END pairs and `NAME:value` lines, which ical.js does not check itself. */
function checkStructure(lines: ContentLine[]): IcsProblem | null {
  if (lines.length === 0) return { line: 1, message: "the file is empty: expected BEGIN:VCALENDAR" };
  if (!/^BEGIN:VCALENDAR$/i.test(lines[0]!.text)) {
    return { line: lines[0]!.line, message: `expected BEGIN:VCALENDAR, found "${clip(lines[0]!.text)}"` };
  }
  const stack: ContentLine[] = [];
  for (const l of lines) {
    if (!/^[A-Za-z0-9-]+(?:;[^:]*)?:/.test(l.text)) {
      return { line: l.line, message: `not an iCalendar content line (NAME:value): "${clip(l.text)}"` };
    }
    const m = /^(BEGIN|END):(.*)$/i.exec(l.text);
    if (!m) continue;
    const name = m[2]!.trim().toUpperCase();
    if (m[1]!.toUpperCase() === "BEGIN") {
      stack.push({ line: l.line, text: name });
    } else {
      const open = stack.pop();
      if (!open) return { line: l.line, message: `END:${name} without a BEGIN` };
      if (open.text !== name) return { line: l.line, message: `END:${name} closes BEGIN:${open.text} of line ${open.line}` };
    }
  }
  const open = stack.pop();
  if (open) return { line: open.line, message: `BEGIN:${open.text} is never closed (missing END:${open.text})` };
  return null;
}

/** The first property of the event whose value cannot be read (ical.js reads values on use): where an error is. */
function failingProperty(ve: IcalComponent): string | null {
  for (const p of ve.getAllProperties()) {
    try {
      p.getValues();
    } catch {
      return p.name.toUpperCase();
    }
  }
  return null;
}

function propertyLine(lines: ContentLine[], from: number, prop: string): number {
  const re = new RegExp(`^${prop}[;:]`, "i");
  for (const l of lines) {
    if (l.line < from) continue;
    if (re.test(l.text)) return l.line;
    if (/^END:VEVENT$/i.test(l.text)) break;
  }
  return from;
}

function lineOfParserError(e: unknown, lines: ContentLine[]): number {
  const quoted = /"([^"]*)"/.exec(errorText(e))?.[1];
  if (quoted) {
    const hit = lines.find((l) => l.text.includes(quoted));
    if (hit) return hit.line;
  }
  return 0;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function clip(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

