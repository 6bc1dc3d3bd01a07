import { parseInstant } from "../../shared/instant.js";

/**
 * Times people type for `--since`/`--until` (audit, history), as journalctl
 * reads them: an ISO date (`2026-11-01`: UTC midnight, as the API has it) or
 * instant (`2026-11-01T12:00:00Z`, also as the tables print one:
 * `2026-11-22 08:30:00 +01:00`), a date and time without a zone
 * (`2026-11-01 12:00`: the machine's zone, TZ, as every time svc prints; not
 * the daemon's), `now`, `today` and `yesterday` (local midnight, TZ), or a
 * time ago: `1h`, `30m`, `2d`, `1h30m`, also written `-1h` or `1h ago`. A date
 * or time that does not exist is refused. Returns an ISO instant, or the date
 * as given. Pure: `now` is passed in.
 */
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?\s?(Z|[+-]\d{2}:?\d{2})?)?$/i;
const AGO = /^-?((?:\d+(?:ms|s|m|h|d|w))+)(?:\s+ago)?$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function parseWhen(text: string, now: Date): string | null {
  const t = text.trim().toLowerCase();
  if (t === "now") return now.toISOString();
  if (t === "today" || t === "yesterday") {
    const d = new Date(now.getFullYear(), now.getMonth(), now.getDate() - (t === "yesterday" ? 1 : 0));
    return d.toISOString();
  }
  if (t === "tomorrow") return new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1).toISOString();
  const ago = AGO.exec(t);
  if (ago) {
    let ms = 0;
    for (const [, n, unit] of ago[1]!.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) ms += Number(n) * UNIT_MS[unit!]!;
    return new Date(now.getTime() - ms).toISOString();
  }
  return isoWhen(text.trim());
}

function isoWhen(text: string): string | null {
  const m = ISO.exec(text);
  if (m === null) return null;
  const [, y, mo, d, h, mi, s = "00", frac = "", zone] = m;
  if (h === undefined) return parseInstant(`${y}-${mo}-${d}`) === null ? null : `${y}-${mo}-${d}`;
  const utc = `${y}-${mo}-${d}T${h}:${mi}:${s}${frac}`;
  if (zone !== undefined) {
    const ms = parseInstant(`${utc}${zone.toUpperCase()}`);
    return ms === null ? null : new Date(ms).toISOString();
  }
  // No zone: the machine's, TZ (a time in a DST gap moves forward, as the clock does).
  if (parseInstant(`${utc}Z`) === null) return null;
  return new Date(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Math.round(Number(`0${frac}`) * 1000)).toISOString();
}

export const WHEN_HELP = "an ISO date or instant, today, yesterday, now, or a time ago (1h, 30m, 2d, 1h30m ago)";

/**
 * `--since` and `--until` as parseWhen reads them (undefined when not given);
 * a value it cannot read throws `usage("--since must be ..., got ...")`.
 */
export function sinceUntil(opts: { since?: string; until?: string }, usage: (message: string) => Error, now: Date): { since?: string; until?: string } {
  const when = (flag: string, v: string | undefined): string | undefined => {
    if (v === undefined) return undefined;
    const at = parseWhen(v, now);
    if (at === null) throw usage(`${flag} must be ${WHEN_HELP}, got "${v}"`);
    return at;
  };
  return { since: when("--since", opts.since), until: when("--until", opts.until) };
}
