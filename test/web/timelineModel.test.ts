/**
 * The dashboard timeline's pure parts (src/web/views/timeline/model.ts):
 * parsing the API's arrays, rows, zoom and pan, bar and cluster layout,
 * attempt segments, axis ticks across a DST change, and the run sentences.
 */
import { describe, expect, it } from "vitest";
import {
  buildRows,
  describeAttempts,
  describeRun,
  CLUSTER_MAX_PX,
  layoutRow,
  liveView,
  MAX_SPAN,
  MIN_BAR_PX,
  pan,
  parseRuns,
  segments,
  ticks,
  zoom,
  type TLRun,
} from "../../src/web/views/timeline/model.js";

const T0 = Date.parse("2026-11-24T00:00:00.000Z");
const S = 1000;
const MIN = 60 * S;
const HOUR = 60 * MIN;

function run(over: Partial<TLRun> & { id: number }): TLRun {
  return { job: "a", status: "SUCCESS", attempt: 1, trigger: "schedule", start: T0, end: T0 + MIN, exit: 0, sla: false, attempts: null, ...over };
}

describe("parseRuns", () => {
  it("reads each array by the answer's column names, in any order", () => {
    const columns = ["attempts", "end", "start", "status", "job_name", "id", "attempt", "trigger", "exit_code", "sla_breached"];
    const [r] = parseRuns(columns, [
      [
        [{ attempt: 1, started_at: "2026-11-24T00:00:00.000Z", finished_at: "2026-11-24T00:00:01.000Z", exit_code: 3, error: "exit 3" }],
        null,
        "2026-11-24T00:00:00.000Z",
        "RUNNING",
        "extract",
        42,
        2,
        "manual",
        null,
        1,
      ],
    ]);
    expect(r).toEqual({
      id: 42,
      job: "extract",
      status: "RUNNING",
      attempt: 2,
      trigger: "manual",
      start: T0,
      end: null,
      exit: null,
      sla: true,
      attempts: [{ attempt: 1, start: T0, end: T0 + S, exit: 3, error: "exit 3" }],
    });
    expect(() => parseRuns(["id"], [[1]])).toThrow(/no "job_name" column/);
  });
});

describe("zoom and pan", () => {
  const v = { from: T0, to: T0 + 4 * HOUR };
  it("zooms around an anchor that stays where it is on screen", () => {
    const anchor = T0 + HOUR;
    const z = zoom(v, 0.5, anchor);
    expect(z.to - z.from).toBe(2 * HOUR);
    expect((anchor - z.from) / (z.to - z.from)).toBeCloseTo((anchor - v.from) / (v.to - v.from));
    expect(zoom(v, 2)).toEqual({ from: T0 - 2 * HOUR, to: T0 + 6 * HOUR });
  });
  it("keeps the span between a minute and the API's 31 days", () => {
    const tiny = zoom({ from: T0, to: T0 + 2 * MIN }, 0.01);
    expect(tiny.to - tiny.from).toBe(MIN);
    const huge = zoom(v, 1000);
    expect(huge.to - huge.from).toBe(MAX_SPAN);
  });
  it("pans by a fraction of the span, and a live window ends a little after now", () => {
    expect(pan(v, -0.25)).toEqual({ from: T0 - HOUR, to: T0 + 3 * HOUR });
    const live = liveView(HOUR, T0);
    expect(live.from).toBe(T0 - HOUR);
    expect(live.to).toBeGreaterThan(T0);
  });
});

describe("buildRows", () => {
  it("gives every configured job a row, adds jobs seen only in history, sorts by name and by start", () => {
    const runs = [run({ id: 2, job: "b", start: T0 + 2 * MIN }), run({ id: 1, job: "b", start: T0 }), run({ id: 3, job: "old" })];
    const rows = buildRows(["c", "b"], runs, { from: T0, to: T0 + HOUR }, T0 + HOUR, false);
    expect(rows.map((r) => [r.job, r.configured, r.runs.map((x) => x.id)])).toEqual([
      ["b", true, [1, 2]],
      ["c", true, []],
      ["old", false, [3]],
    ]);
    expect(buildRows(["c", "b"], runs, { from: T0, to: T0 + HOUR }, T0 + HOUR, true).map((r) => r.job)).toEqual(["b", "old"]);
  });
});

describe("layoutRow", () => {
  const view = { from: T0, to: T0 + HOUR };
  const width = 3600; // one pixel a second

  it("places bars by time, keeps instants visible, leaves out runs outside the window", () => {
    const items = layoutRow(
      [
        run({ id: 1, start: T0 - 2 * HOUR, end: T0 - HOUR }),
        run({ id: 2, start: T0 + 10 * MIN, end: T0 + 20 * MIN }),
        run({ id: 3, status: "SKIPPED", start: T0 + 30 * MIN, end: T0 + 30 * MIN }),
        run({ id: 4, start: T0 + 2 * HOUR, end: T0 + 3 * HOUR }),
      ],
      view,
      width,
      T0 + HOUR,
    );
    expect(items.map((it) => (it.kind === "bar" ? [it.run.id, it.x, it.w] : null))).toEqual([
      [2, 600, 600],
      [3, 1800, MIN_BAR_PX],
    ]);
  });

  it("grows an active run's bar with now", () => {
    const r = run({ id: 1, status: "RUNNING", start: T0 + 10 * MIN, end: null });
    const at = (now: number) => layoutRow([r], view, width, now)[0]!.w;
    expect(at(T0 + 11 * MIN)).toBe(60);
    expect(at(T0 + 12 * MIN)).toBe(120);
  });

  it("groups runs too close together to tell apart into one cluster, and keeps separate ones apart", () => {
    // 600 runs of a second each, every 2 s, over 20 minutes: 2 pixels apart at one pixel a second.
    const dense = Array.from({ length: 600 }, (_, i) => run({ id: i + 1, start: T0 + i * 2 * S, end: T0 + i * 2 * S + S }));
    const items = layoutRow(dense, view, width, T0 + HOUR);
    // Groups of at most CLUSTER_MAX_PX: 1,200 pixels of runs in ~50 groups, every run in one of them.
    expect(items.every((it) => it.kind === "cluster" && it.w <= CLUSTER_MAX_PX + MIN_BAR_PX)).toBe(true);
    expect(items.length).toBeGreaterThan(40);
    expect(items.length).toBeLessThan(70);
    expect(items.flatMap((it) => (it.kind === "cluster" ? it.runs.map((r) => r.id) : []))).toEqual(dense.map((r) => r.id));
    expect(items[0]).toMatchObject({ kind: "cluster", from: T0 });
    const sparse = Array.from({ length: 10 }, (_, i) => run({ id: i + 1, start: T0 + i * MIN, end: T0 + i * MIN + 10 * S }));
    expect(layoutRow(sparse, view, width, T0 + HOUR).every((it) => it.kind === "bar")).toBe(true);
    // Zoomed in enough, the dense runs are bars again.
    const zoomed = layoutRow(dense, { from: T0, to: T0 + MIN }, width, T0 + HOUR);
    expect(zoomed.length).toBeGreaterThan(25);
    expect(zoomed.every((it) => it.kind === "bar")).toBe(true);
  });
});

describe("segments", () => {
  const attempts = [
    { attempt: 1, start: T0, end: T0 + 10 * S, exit: 3, error: "exit 3" },
    { attempt: 2, start: T0 + 40 * S, end: null, exit: null, error: null },
  ];
  it("draws each attempt, failed ones marked, and the wait between them", () => {
    const r = run({ id: 1, status: "SUCCESS", attempt: 2, start: T0, end: T0 + 60 * S, attempts });
    expect(segments(r, T0 + HOUR, 1 / S)).toEqual([
      { x: 0, w: 10, kind: "attempt-failed", attempt: 1 },
      { x: 10, w: 30, kind: "wait", attempt: 2 },
      { x: 40, w: 20, kind: "attempt", attempt: 2 },
    ]);
    expect(describeAttempts(r, T0 + HOUR)).toBe("attempt 1: exit 3 after 10 s; waited 30 s; attempt 2: succeeded after 20 s");
  });
  it("lets a running last attempt reach now, and shows a retry that never came as a wait", () => {
    const running = run({ id: 1, status: "RUNNING", attempt: 2, start: T0, end: null, attempts });
    expect(segments(running, T0 + 50 * S, 1 / S).at(-1)).toEqual({ x: 40, w: 10, kind: "attempt", attempt: 2 });
    const cancelled = run({ id: 2, status: "FAILED", attempt: 1, start: T0, end: T0 + 30 * S, attempts: [attempts[0]!] });
    expect(segments(cancelled, T0 + HOUR, 1 / S)).toEqual([
      { x: 0, w: 10, kind: "attempt-failed", attempt: 1 },
      { x: 10, w: 20, kind: "wait", attempt: 2 },
    ]);
  });
  it("is one block while the bar is too narrow to show attempts apart", () => {
    const r = run({ id: 1, attempt: 2, start: T0, end: T0 + 60 * S, attempts });
    const [bar] = layoutRow([r], { from: T0, to: T0 + 24 * HOUR }, 1000, T0 + HOUR);
    expect(bar!.kind === "bar" && bar!.segments).toEqual([{ x: 0, w: MIN_BAR_PX, kind: "attempt", attempt: 2 }]);
  });
});

describe("ticks", () => {
  it("falls on round local hours, also across a DST change", () => {
    // Europe/Berlin on 2026-10-25: +2 h until 01:00Z, then +1 h.
    const change = Date.parse("2026-10-25T01:00:00.000Z");
    const offset = (t: number) => (t < change ? 2 : 1) * HOUR;
    const view = { from: Date.parse("2026-10-24T22:00:00.000Z"), to: Date.parse("2026-10-25T04:00:00.000Z") };
    const list = ticks(view, 600, offset, 90);
    const local = list.map(({ at }) => new Date(at + offset(at)).toISOString().slice(11, 16));
    expect(new Set(list.map((t) => t.step))).toEqual(new Set([HOUR]));
    // 00:00, 01:00, 02:00 (summer), 02:00 again (winter), 03:00, 04:00: each an hour apart in real time
    expect(local).toEqual(["00:00", "01:00", "02:00", "02:00", "03:00", "04:00"]);
    expect(list.every(({ at }, i) => i === 0 || at - list[i - 1]!.at === HOUR)).toBe(true);
  });
  it("uses steps of seconds when zoomed in to a minute, and of days for a week", () => {
    const list = ticks({ from: T0, to: T0 + MIN }, 1000, () => 0, 90);
    expect(list.map((t) => (t.at - T0) / S)).toEqual([0, 10, 20, 30, 40, 50]);
    const week = ticks({ from: T0 + 5 * HOUR, to: T0 + 7 * 24 * HOUR }, 700, () => HOUR, 90);
    expect(week.map((t) => new Date(t.at + HOUR).toISOString().slice(11, 16))).toEqual(Array(7).fill("00:00"));
  });
});

describe("describeRun", () => {
  const time = (ms: number) => new Date(ms).toISOString().slice(11, 19);
  it("says what the run did in words, for the label and screen readers", () => {
    expect(describeRun(run({ id: 7, job: "x", status: "FAILED", exit: 2, sla: true, start: T0, end: T0 + 90 * S }), T0, time)).toBe(
      "Run #7 of x: failed, started 00:00:00, took 1m 30s, exit code 2, SLA breached, trigger schedule",
    );
    expect(describeRun(run({ id: 8, status: "RUNNING", attempt: 3, end: null, exit: null }), T0 + 5 * S, time)).toBe(
      "Run #8 of a: running, started 00:00:00, 5.0 s so far, attempt 3, trigger schedule",
    );
    expect(describeRun(run({ id: 9, status: "SKIPPED", exit: null, end: T0 }), T0, time)).toBe("Run #9 of a: skipped, at 00:00:00, trigger schedule");
  });
});
