/**
 * Durations: one or more `<number><unit>` with units ms, s, m, h, d
 * (`90s`, `1h30m`, `2d`, `1.5h`). Parsed once at load into milliseconds.
 */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const WHOLE = /^(?:[0-9]+(?:\.[0-9]+)?(?:ms|s|m|h|d))+$/;
const PART = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)/g;

/** Milliseconds, or null when `text` is not a duration. */
export function parseDuration(text: string): number | null {
  if (!WHOLE.test(text)) return null;
  let ms = 0;
  for (const m of text.matchAll(PART)) ms += Number(m[1]) * UNIT_MS[m[2]!]!;
  return Number.isFinite(ms) ? Math.round(ms) : null;
}

const UNITS = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["m", 60_000],
  ["s", 1_000],
  ["ms", 1],
] as const;

/** `ms` split into whole units, largest first, down to `smallest`; zero parts left out. */
function parts(ms: number, smallest: (typeof UNITS)[number][0]): string[] {
  let rest = ms;
  const out: string[] = [];
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    if (n > 0) out.push(`${n}${unit}`);
    rest -= n * size;
    if (unit === smallest) break;
  }
  return out;
}

/** The canonical config form of a millisecond count, what parseDuration reads back: `1h30m`, `90s` -> `1m30s`, `0s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  return parts(Math.round(ms), "ms").join("");
}

/** For people (notification texts): whole seconds, spaced: 65_000 -> "1m 5s"; 350 -> "350ms"; null -> "". */
export function humanDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms) || ms < 0) return "";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const out = parts(ms, "s");
  return out.length === 0 ? "0s" : out.join(" ");
}
