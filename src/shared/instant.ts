/**
 * An ISO 8601 instant as people write one on a command line or in a request:
 * a date alone (`2026-11-01`, UTC midnight) or a date-time with `Z` or an
 * offset (`2026-11-01T06:00:00Z`, `2026-11-01T01:00-05:00`). A date-time
 * without a zone is refused: it would mean the reader's zone. So is a date
 * or time that does not exist (`2026-02-30`, `24:00`), which Date.parse
 * would move to another day. Epoch ms, or null when the text is none of these.
 */
export function parseInstant(text: string): number | null {
  const m = INSTANT.exec(text);
  if (m === null) return null;
  const [, y, mo, d, h = "0", mi = "0", s = "0", , oh = "0", om = "0"] = m.map((x) => x ?? undefined);
  const month = Number(mo);
  if (month < 1 || month > 12 || Number(d) < 1 || Number(d) > daysIn(Number(y), month)) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59 || Number(oh) > 23 || Number(om) > 59) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-](\d{2}):?(\d{2})))?$/;

/** Days of the month in the proleptic Gregorian calendar (Date.UTC would read years 0-99 as 1900-1999). */
function daysIn(year: number, month: number): number {
  if (month !== 2) return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}

/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the instants ISO 8601's four-digit years can write. */
export const MIN_INSTANT_MS = -62_167_219_200_000;
export const MAX_INSTANT_MS = 253_402_300_799_999;

/**
 * Whether an instant has a four-digit year. Past them `toISOString` writes `+010000-...` (which sorts
 * before `2026-...` as text, as timestamps are stored and compared) or throws (past ±275,760 years).
 */
export function inIsoRange(ms: number): boolean {
  return ms >= MIN_INSTANT_MS && ms <= MAX_INSTANT_MS;
}
