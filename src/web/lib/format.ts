/** Display helpers: the browser's locale and zone unless told otherwise. */

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

export function fmtTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d);
}

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

/** The instant in an IANA zone with its abbreviation, for the job-zone tooltip. */
export function fmtTimeInZone(iso: string | null | undefined, zone: string | null | undefined): string {
  if (!iso || !zone) return "";
  let f = zoneFormats.get(zone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat(undefined, {
        dateStyle: "medium",
        timeStyle: "long",
        timeZone: zone,
      });
    } catch {
      return "";
    }
    zoneFormats.set(zone, f);
  }
  return `${f.format(new Date(iso))} (${zone})`;
}

const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["second", 60],
  ["minute", 60],
  ["hour", 24],
  ["day", 30],
  ["month", 12],
  ["year", Infinity],
];

/** "3 minutes ago", "in 2 hours". */
export function fmtRel(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return "";
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return "";
  let v = (t - now) / 1000;
  for (const [unit, size] of STEPS) {
    if (Math.abs(v) < size) return rtf.format(Math.round(v), unit);
    v /= size;
  }
  return "";
}

/** 950 -> "950 ms", 61000 -> "1m 1s", 3720000 -> "1h 2m". */
export function fmtDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const total = Math.round(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  return h > 0 ? `${h}h ${m}m` : `${m}m ${sec}s`;
}

/** A run's duration: the recorded one, else the time since it started. */
export function runDuration(run: { duration_ms: number | null; started_at: string | null; finished_at: string | null }): number | null {
  if (run.duration_ms !== null && run.duration_ms !== undefined) return run.duration_ms;
  if (!run.started_at) return null;
  const end = run.finished_at ? new Date(run.finished_at).getTime() : Date.now();
  return end - new Date(run.started_at).getTime();
}

export const shortId = (uuid: string | null | undefined) => (uuid ? uuid.slice(0, 8) : "—");

/** `plural(1, "run")` -> "1 run", `plural(3, "run")` -> "3 runs". */
export const plural = (n: number, word: string, many = `${word}s`) => `${n} ${n === 1 ? word : many}`;
