/**
 * `frequency: "cron:<expr>"` and `frequency: "every:<n><unit>"` (CONTRACT
 * §7.1) -> CronSpec, plain data the schedule module compiles. Written here
 * rather than taken from croner or cron-parser: their parsers accept more
 * than §7.1 (`?`, `W`, a year field, `L` in other places), disagree on what
 * "restricted" means for the day-of-month/day-of-week OR, and report errors
 * without naming the field; the grammar is small enough to state exactly
 * (docs/CONFIG.md, "Why our own cron parser").
 *
 * Grammar of one field: `*`, `n`, `a-b`, `*\/s`, `a-b/s`, `n/s` (n to the
 * field's maximum), or a `,` list of those. Names jan-dec and sun-sat in any
 * case, also inside ranges. Day-of-month `L`; day-of-week `5L`, `1#2`.
 */
import type { CronSpec } from "./types.js";

export type CronParse = { ok: true; spec: CronSpec } | { ok: false; message: string };

interface FieldDef {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** Index of the first name in `names` (months count from 1). */
  nameBase?: number;
}

const MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"] as const;
const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;

const SECOND: FieldDef = { name: "second", min: 0, max: 59 };
const MINUTE: FieldDef = { name: "minute", min: 0, max: 59 };
const HOUR: FieldDef = { name: "hour", min: 0, max: 23 };
const DOM: FieldDef = { name: "day-of-month", min: 1, max: 31 };
const MONTH: FieldDef = { name: "month", min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 };
const DOW: FieldDef = { name: "day-of-week", min: 0, max: 7, names: DAY_NAMES, nameBase: 0 };

/** The macros of §7.1, plus Vixie's `@midnight` (= `@daily`), which crontabs use. */
export const CRON_MACROS: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

const FIELDS_5 = "minute hour day-of-month month day-of-week";

/** Parses the text after `cron:`. Errors name the field by number and name, and say what is allowed. */
export function parseCron(source: string): CronParse {
  const text = source.trim();
  if (text === "") return fail(`cron expression is empty: write 5 fields (${FIELDS_5}), e.g. cron:*/5 * * * *`);
  let expr = text;
  if (text.startsWith("@")) {
    const macro = CRON_MACROS[text.toLowerCase()];
    if (macro === undefined) {
      const why = text.toLowerCase() === "@reboot" ? "@reboot is not a schedule (svc has no boot event)" : `unknown macro "${text}"`;
      return fail(`${why}: use one of ${Object.keys(CRON_MACROS).join(", ")} or 5 fields (${FIELDS_5})`);
    }
    expr = macro;
  }
  const parts = expr.split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) {
    return fail(
      `cron expression must have 5 fields (${FIELDS_5}) or 6 (second first), got ${parts.length}: "${text}"`,
    );
  }
  const withSeconds = parts.length === 6;
  const offset = withSeconds ? 0 : 1;
  const fields = withSeconds ? parts : ["0", ...parts];
  const sets: number[][] = [];
  let lastDayOfMonth = false;
  const lastWeekdays: number[] = [];
  const nthWeekdays: { weekday: number; n: number }[] = [];
  for (let i = 0; i < 6; i++) {
    const def = [SECOND, MINUTE, HOUR, DOM, MONTH, DOW][i]!;
    const raw = fields[i]!;
    const label = `cron field ${i + 1 - offset} (${def.name})`;
    const values = new Set<number>();
    for (const item of raw.split(",")) {
      if (item === "") return fail(`${label} "${raw}" has an empty list item`);
      if (def === DOM && /^l$/i.test(item)) {
        lastDayOfMonth = true;
        continue;
      }
      if (def === DOW) {
        const special = parseSpecialWeekday(item, label);
        if (special !== null) {
          if ("message" in special) return fail(special.message);
          if (special.n === null) lastWeekdays.push(special.weekday);
          else nthWeekdays.push({ weekday: special.weekday, n: special.n });
          continue;
        }
      }
      const r = parseItem(item, def, label);
      if ("message" in r) return fail(r.message);
      for (const v of r.values) values.add(def === DOW && v === 7 ? 0 : v);
    }
    sets.push([...values].sort((a, b) => a - b));
  }
  const restricted = (i: number) => !fields[i]!.startsWith("*");
  const spec: CronSpec = {
    source: text,
    expr: fields.join(" "),
    seconds: sets[0]!,
    minutes: sets[1]!,
    hours: sets[2]!,
    daysOfMonth: sets[3]!,
    lastDayOfMonth,
    months: sets[4]!,
    weekdays: sets[5]!,
    lastWeekdays: [...new Set(lastWeekdays)].sort((a, b) => a - b),
    nthWeekdays: dedupeNth(nthWeekdays),
    domRestricted: restricted(3),
    dowRestricted: restricted(5),
    fixedTime: restricted(1) && restricted(2),
  };
  return { ok: true, spec };
}

export const EVERY_UNITS = { s: 60, m: 60, h: 24 } as const;

/** The values `every:` accepts, for messages: "1s 2s 3s 4s 5s 6s 10s 12s 15s 20s 30s 60s, ...". */
export function everyAllowed(): string {
  const list = (unit: keyof typeof EVERY_UNITS) =>
    divisors(EVERY_UNITS[unit])
      .map((n) => `${n}${unit}`)
      .join(" ");
  return `${list("s")}; ${list("m")}; ${list("h")}`;
}

/**
 * `every:<n><unit>` = `cron:*\/n * * * * *` (s), `cron:*\/n * * * *` (m),
 * `cron:0 *\/n * * *` (h), with n dividing 60 (s, m) or 24 (h).
 */
export function parseEvery(source: string): CronParse {
  const m = /^([0-9]+)([smh])$/.exec(source.trim());
  const hint = `every: takes ${everyAllowed()}; for other periods use cron: (e.g. cron:*/7 * * * * runs at minutes 0, 7, ... 56 of each hour)`;
  if (!m) return fail(`every:${source} is not <n><unit> with unit s, m or h: ${hint}`);
  const n = Number(m[1]);
  const unit = m[2] as keyof typeof EVERY_UNITS;
  if (n < 1 || EVERY_UNITS[unit] % n !== 0) {
    return fail(`every:${source}: ${n}${unit} does not divide ${unit === "h" ? "a day" : unit === "m" ? "an hour" : "a minute"} evenly. ${hint}`);
  }
  const expr = unit === "s" ? `*/${n} * * * * *` : unit === "m" ? `*/${n} * * * *` : `0 */${n} * * *`;
  const r = parseCron(expr);
  return r.ok ? { ok: true, spec: { ...r.spec, source: source.trim() } } : r;
}

function divisors(n: number): number[] {
  const out: number[] = [];
  for (let i = 1; i <= n; i++) if (n % i === 0) out.push(i);
  return out;
}

function fail(message: string): { ok: false; message: string } {
  return { ok: false, message };
}

type ItemResult = { values: number[] } | { message: string };

function parseItem(item: string, def: FieldDef, label: string): ItemResult {
  const slash = item.split("/");
  if (slash.length > 2) return { message: `${label} "${item}" has more than one "/"` };
  const [rangeText, stepText] = slash as [string, string | undefined];
  let lo: number;
  let hi: number;
  if (rangeText === "*") {
    lo = def.min;
    hi = def === DOW ? 6 : def.max;
  } else {
    const dash = rangeText.split("-");
    if (dash.length > 2 || dash[0] === "") return { message: `${label} "${item}" is not a number, a range a-b or *${allowedHint(def)}` };
    const a = parseValue(dash[0]!, def, label);
    if (typeof a !== "number") return a;
    lo = a;
    if (dash.length === 2) {
      const b = parseValue(dash[1]!, def, label);
      if (typeof b !== "number") return b;
      hi = b;
      if (hi < lo) {
        const wrap = `${lo}-${def === DOW ? 6 : def.max},${def.min}-${hi}`;
        return { message: `${label} range "${rangeText}" runs backwards: write the smaller value first, or a list like ${wrap}` };
      }
    } else {
      // `n/s` means n to the field's maximum in steps of s (Vixie, cronie); `n` alone is one value.
      hi = stepText === undefined ? lo : def === DOW ? 6 : def.max;
    }
  }
  let step = 1;
  if (stepText !== undefined) {
    const span = def === DOW ? 7 : def.max - def.min + 1;
    if (!/^[0-9]+$/.test(stepText) || Number(stepText) < 1 || Number(stepText) > span) {
      return { message: `${label} step "${stepText}" in "${item}" must be a whole number from 1 to ${span}` };
    }
    step = Number(stepText);
  }
  const values: number[] = [];
  for (let v = lo; v <= hi; v += step) values.push(v);
  return { values };
}

function parseValue(text: string, def: FieldDef, label: string): number | { message: string } {
  if (/^[0-9]+$/.test(text)) {
    const n = Number(text);
    if (n < def.min || n > def.max) {
      return { message: `${label} "${text}" is out of range ${def.min}-${def.max}${def === DOW ? " (0 and 7 are Sunday)" : ""}` };
    }
    return n;
  }
  const idx = def.names?.indexOf(text.toLowerCase() as never) ?? -1;
  if (idx >= 0) return idx + (def.nameBase ?? 0);
  return { message: `${label} "${text}" is not a number${def.names ? " or a name" : ""}${allowedHint(def)}` };
}

function allowedHint(def: FieldDef): string {
  const names = def.names ? ` or ${def.names[0]}-${def.names[def.names.length - 1]}` : "";
  const extra = def === DOM ? ", L (last day)" : def === DOW ? ", 5L (last Friday), 1#2 (second Monday)" : "";
  return ` (allowed: ${def.min}-${def.max}${names}${extra}, *, ranges, steps and lists)`;
}

/** `5L`, `friL`, `1#2`, `mon#2`; null when the item is none of these. */
function parseSpecialWeekday(
  item: string,
  label: string,
): null | { weekday: number; n: number | null } | { message: string } {
  const m = /^([0-9]+|[a-z]{3})(?:(l)|#([0-9]+))$/i.exec(item);
  if (!m) return null;
  const wd = parseValue(m[1]!, DOW, label);
  if (typeof wd !== "number") return wd;
  const weekday = wd === 7 ? 0 : wd;
  if (m[2] !== undefined) return { weekday, n: null };
  const n = Number(m[3]);
  if (n < 1 || n > 5) return { message: `${label} "${item}": the number after # must be 1-5 (which occurrence of the weekday in the month)` };
  return { weekday, n };
}

function dedupeNth(list: { weekday: number; n: number }[]): { weekday: number; n: number }[] {
  const seen = new Set<number>();
  const out: { weekday: number; n: number }[] = [];
  for (const e of list) {
    const key = e.weekday * 10 + e.n;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(e);
    }
  }
  return out.sort((a, b) => a.weekday - b.weekday || a.n - b.n);
}
