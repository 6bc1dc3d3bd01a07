/**
 * The timeline's pure parts: the API's run arrays as records, rows per job,
 * the visible window (presets, zoom, pan), bar layout and axis ticks. No DOM
 * and no clock reads: `now` is passed in (test/web/timelineModel.test.ts).
 */

export type Status = "PENDING" | "RUNNING" | "SUCCESS" | "FAILED" | "RETRYING" | "SKIPPED";

export interface Attempt {
  attempt: number;
  start: number;
  /** null: the run's last attempt, which ends with the run. */
  end: number | null;
  exit: number | null;
  error: string | null;
}

export interface TLRun {
  id: number;
  job: string;
  status: Status;
  attempt: number;
  trigger: string;
  /** Epoch ms. */
  start: number;
  /** Epoch ms; null while PENDING, RUNNING or RETRYING (the run reaches now). */
  end: number | null;
  exit: number | null;
  sla: boolean;
  attempts: Attempt[] | null;
}

interface ApiAttempt {
  attempt: number;
  started_at: string;
  finished_at: string | null;
  exit_code: number | null;
  error: string | null;
}

/** `GET /api/timeline` and `/api/timeline/changes` rows, by the answer's `columns`. */
export function parseRuns(columns: readonly string[], rows: readonly unknown[][]): TLRun[] {
  const at = (name: string) => {
    const i = columns.indexOf(name);
    if (i < 0) throw new Error(`timeline answer has no "${name}" column`);
    return i;
  };
  const [id, job, status, attempt, trigger, start, end, exit, sla, attempts] = [
    "id",
    "job_name",
    "status",
    "attempt",
    "trigger",
    "start",
    "end",
    "exit_code",
    "sla_breached",
    "attempts",
  ].map(at) as [number, number, number, number, number, number, number, number, number, number];
  return rows.map((r) => ({
    id: r[id] as number,
    job: r[job] as string,
    status: r[status] as Status,
    attempt: r[attempt] as number,
    trigger: r[trigger] as string,
    start: Date.parse(r[start] as string),
    end: r[end] === null ? null : Date.parse(r[end] as string),
    exit: r[exit] as number | null,
    sla: r[sla] === 1,
    attempts:
      r[attempts] === null
        ? null
        : (r[attempts] as ApiAttempt[]).map((a) => ({
            attempt: a.attempt,
            start: Date.parse(a.started_at),
            end: a.finished_at === null ? null : Date.parse(a.finished_at),
            exit: a.exit_code,
            error: a.error,
          })),
  }));
}

export const isActive = (s: Status) => s === "PENDING" || s === "RUNNING" || s === "RETRYING";

/** Where a run's bar ends: its end, or now while it is active. */
export const runEnd = (r: TLRun, now: number) => (r.end ?? Math.max(now, r.start));

// ---- the window ----------------------------------------------------------------

export interface View {
  from: number;
  to: number;
}

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
export const PRESETS = { "1h": HOUR, "6h": 6 * HOUR, "24h": DAY, "7d": 7 * DAY } as const;
export type Preset = keyof typeof PRESETS;
export const MIN_SPAN = MIN;
/** The API's widest window. */
export const MAX_SPAN = 31 * DAY;

/** A live window ends a little after now, so the now line and growing bars are not on the edge. */
export function liveView(span: number, now: number): View {
  return { from: now - span, to: now + Math.round(span * 0.04) };
}

function clampSpan(span: number): number {
  return Math.min(MAX_SPAN, Math.max(MIN_SPAN, span));
}

/** Zoom by `factor` (< 1 zooms in) keeping the instant `anchor` where it is on screen. */
export function zoom(v: View, factor: number, anchor = (v.from + v.to) / 2): View {
  const span = clampSpan((v.to - v.from) * factor);
  const k = (anchor - v.from) / (v.to - v.from);
  const from = Math.round(anchor - k * span);
  return { from, to: from + Math.round(span) };
}

/** Move by a fraction of the span (negative: back in time). */
export function pan(v: View, fraction: number): View {
  const d = Math.round((v.to - v.from) * fraction);
  return { from: v.from + d, to: v.to + d };
}

// ---- rows and bars ---------------------------------------------------------------

export interface Row {
  job: string;
  /** Sorted by start, then id. */
  runs: TLRun[];
  /** Configured in svc.yaml (else: a job with history that is no longer there). */
  configured: boolean;
}

/**
 * One row per job: the configured jobs the filters select, plus jobs seen
 * only in history; sorted by name. `hideIdle`: only rows with a run that
 * overlaps `view`.
 */
export function buildRows(jobs: readonly string[], runs: Iterable<TLRun>, view: View, now: number, hideIdle: boolean): Row[] {
  const byJob = new Map<string, TLRun[]>();
  for (const j of jobs) byJob.set(j, []);
  const configured = new Set(jobs);
  for (const r of runs) {
    let list = byJob.get(r.job);
    if (!list) byJob.set(r.job, (list = []));
    list.push(r);
  }
  const rows: Row[] = [];
  for (const [job, list] of byJob) {
    list.sort((a, b) => a.start - b.start || a.id - b.id);
    if (hideIdle && !list.some((r) => r.start < view.to && runEnd(r, now) >= view.from)) continue;
    rows.push({ job, runs: list, configured: configured.has(job) });
  }
  rows.sort((a, b) => (a.job < b.job ? -1 : a.job > b.job ? 1 : 0));
  return rows;
}

export type Item =
  | { kind: "bar"; run: TLRun; x: number; w: number; segments: Segment[] }
  | { kind: "cluster"; runs: TLRun[]; x: number; w: number; from: number; to: number };

export interface Segment {
  /** Pixels from the bar's left edge. */
  x: number;
  w: number;
  kind: "attempt-failed" | "attempt" | "wait";
  attempt: number;
}

/** Bars narrower than this are drawn this wide, so an instant stays visible and clickable. */
export const MIN_BAR_PX = 4;
/** Bars that would start within this many pixels of the previous item's end are grouped... */
const CLUSTER_GAP_PX = 2;
/** ...into groups at most this wide, so that selecting one zooms in to something readable. */
export const CLUSTER_MAX_PX = 24;

/**
 * The row's items inside `view` on a chart `width` pixels wide. Runs too
 * close together to tell apart (a job every minute seen over a week) become
 * cluster items of at most CLUSTER_MAX_PX each, which the view offers to zoom
 * into, so a row never holds more than about width / MIN_BAR_PX elements.
 */
export function layoutRow(runs: readonly TLRun[], view: View, width: number, now: number): Item[] {
  const scale = width / (view.to - view.from);
  const px = (t: number) => (t - view.from) * scale;
  const items: Item[] = [];
  let group: TLRun[] = [];
  let gx = 0;
  let gEnd = -Infinity;
  const flush = () => {
    if (group.length === 0) return;
    if (group.length === 1) {
      const run = group[0]!;
      const x = px(run.start);
      const natural = px(runEnd(run, now)) - x;
      const w = Math.max(MIN_BAR_PX, natural);
      // Attempts are drawn once each can get a few pixels; narrower, the bar is one block in the run's status.
      const segs = run.attempts && natural >= run.attempts.length * 2 * MIN_BAR_PX ? segments(run, now, scale) : [{ x: 0, w, kind: "attempt" as const, attempt: run.attempt }];
      items.push({ kind: "bar", run, x, w, segments: segs });
    } else {
      const from = Math.min(...group.map((r) => r.start));
      const to = Math.max(...group.map((r) => runEnd(r, now)));
      items.push({ kind: "cluster", runs: group, x: gx, w: Math.max(MIN_BAR_PX, gEnd - gx), from, to });
    }
    group = [];
  };
  for (const run of runs) {
    const end = runEnd(run, now);
    if (end < view.from || run.start >= view.to) continue;
    const x = px(run.start);
    const right = Math.max(x + MIN_BAR_PX, px(end));
    if (
      group.length > 0 &&
      x <= gEnd + CLUSTER_GAP_PX &&
      (x - gx < MIN_BAR_PX * 2 || right - x < MIN_BAR_PX * 2) &&
      Math.max(gEnd, right) - gx <= CLUSTER_MAX_PX
    ) {
      // Too close to the previous item to see apart: one of them is only a few pixels wide.
      group.push(run);
      gEnd = Math.max(gEnd, right);
      continue;
    }
    flush();
    group = [run];
    gx = x;
    gEnd = right;
  }
  flush();
  return items;
}

/**
 * The attempts of a run that retried, in pixels from its start: each attempt
 * (failed ones marked), and the waits between them. A run without recorded
 * attempts is one segment.
 */
export function segments(run: TLRun, now: number, scale: number): Segment[] {
  const end = runEnd(run, now);
  if (!run.attempts || run.attempts.length === 0) return [{ x: 0, w: (end - run.start) * scale, kind: "attempt", attempt: run.attempt }];
  const out: Segment[] = [];
  let cursor = run.start;
  run.attempts.forEach((a, i) => {
    const last = i === run.attempts!.length - 1;
    if (a.start > cursor) out.push({ x: (cursor - run.start) * scale, w: (a.start - cursor) * scale, kind: "wait", attempt: a.attempt });
    const aEnd = a.end ?? end;
    const failed = a.end !== null && (a.exit !== 0 || a.error !== null);
    out.push({ x: (a.start - run.start) * scale, w: Math.max(0, aEnd - a.start) * scale, kind: failed ? "attempt-failed" : "attempt", attempt: a.attempt });
    cursor = aEnd;
    // A closed last attempt with time after it: the run waited for a retry that never came (cancelled).
    if (last && a.end !== null && end > a.end) out.push({ x: (a.end - run.start) * scale, w: (end - a.end) * scale, kind: "wait", attempt: a.attempt + 1 });
  });
  return out;
}

// ---- axis ---------------------------------------------------------------------------

const SEC = 1000;
const STEPS = [
  5 * SEC,
  10 * SEC,
  15 * SEC,
  30 * SEC,
  1 * MIN,
  2 * MIN,
  5 * MIN,
  10 * MIN,
  15 * MIN,
  30 * MIN,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
];

/**
 * Tick instants for an axis `width` pixels wide, at least `minPx` apart, on
 * round local times (`offsetMs(t)`: the zone's offset at t). Steps up to an
 * hour go by real time, so a fall-back night shows both 02:00s and a
 * spring-forward night skips the hour that does not exist; longer steps go
 * by the wall clock (every 6 h: 00:00, 06:00...).
 */
export function ticks(view: View, width: number, offsetMs: (t: number) => number, minPx = 90): { at: number; step: number }[] {
  const span = view.to - view.from;
  const step = STEPS.find((s) => (s / span) * width >= minPx) ?? STEPS[STEPS.length - 1]!;
  const out: { at: number; step: number }[] = [];
  const push = (at: number) => {
    if (at >= view.from && at < view.to && (out.length === 0 || at > out[out.length - 1]!.at)) out.push({ at, step });
  };
  if (step <= HOUR) {
    let t = Math.floor((view.from + offsetMs(view.from)) / step) * step - offsetMs(view.from);
    for (let guard = 0; t < view.to && guard < 2000; guard++) {
      // Back on a round local time after an offset change that is not a multiple of the step.
      t -= (((t + offsetMs(t)) % step) + step) % step;
      push(t);
      t += step;
    }
    return out;
  }
  // Wall-clock steps: "local ms" is t + offset; each local round time maps back to its instant.
  let local = Math.floor((view.from + offsetMs(view.from)) / step) * step;
  for (let guard = 0; guard < 2000; guard++) {
    const at = local - offsetMs(local - offsetMs(local));
    if (at >= view.to) break;
    push(at);
    local += step;
  }
  return out;
}

// ---- text -----------------------------------------------------------------------------

export function fmtSpan(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const total = Math.round(s);
  const d = Math.floor(total / 86_400);
  const h = Math.floor((total % 86_400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  if (d > 0) return `${d}d ${h}h`;
  return h > 0 ? `${h}h ${m}m` : `${m}m ${sec}s`;
}

const STATUS_TEXT: Record<Status, string> = {
  SUCCESS: "succeeded",
  FAILED: "failed",
  RUNNING: "running",
  RETRYING: "waiting to retry",
  PENDING: "waiting to start",
  SKIPPED: "skipped",
};

/** One sentence about a run, for its label, the hover card and screen readers. */
export function describeRun(r: TLRun, now: number, time: (ms: number) => string): string {
  const parts = [`Run #${r.id} of ${r.job}: ${STATUS_TEXT[r.status]}`];
  if (r.status === "PENDING") parts.push(`since ${time(r.start)} (${fmtSpan(now - r.start)})`);
  else if (r.end === null) parts.push(`started ${time(r.start)}, ${fmtSpan(now - r.start)} so far`);
  else if (r.end === r.start && r.status !== "SUCCESS") parts.push(`at ${time(r.start)}`);
  else parts.push(`started ${time(r.start)}, took ${fmtSpan(r.end - r.start)}`);
  if (r.attempt > 1) parts.push(`attempt ${r.attempt}`);
  if (r.exit !== null && r.status !== "SUCCESS") parts.push(`exit code ${r.exit}`);
  if (r.sla) parts.push("SLA breached");
  parts.push(`trigger ${r.trigger}`);
  return parts.join(", ");
}

/** "attempt 1: exit 3 after 1.2 s; waited 30 s; attempt 2: running" */
export function describeAttempts(r: TLRun, now: number): string | null {
  if (!r.attempts || r.attempts.length < 2) return null;
  const out: string[] = [];
  let prevEnd: number | null = null;
  for (const a of r.attempts) {
    if (prevEnd !== null && a.start > prevEnd) out.push(`waited ${fmtSpan(a.start - prevEnd)}`);
    const end = a.end ?? runEnd(r, now);
    if (a.end === null) out.push(`attempt ${a.attempt}: ${r.end === null ? `${STATUS_TEXT[r.status]}, ${fmtSpan(end - a.start)} so far` : `${STATUS_TEXT[r.status]} after ${fmtSpan(end - a.start)}`}`);
    else out.push(`attempt ${a.attempt}: ${a.exit !== null ? `exit ${a.exit}` : (a.error ?? "failed")} after ${fmtSpan(end - a.start)}`);
    prevEnd = a.end;
  }
  return out.join("; ");
}
