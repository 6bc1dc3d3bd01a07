import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { RunRecord } from "../lib/types.js";
import { plural, runDuration } from "../lib/format.js";

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** x = start time (s), y = duration (s); failures and SLA breaches as separate point-only series. */
function toData(runs: RunRecord[]): { data: uPlot.AlignedData; count: number; failures: number; breaches: number } {
  const sorted = runs
    .filter((r) => r.started_at && runDuration(r) !== null)
    .sort((a, b) => Date.parse(a.started_at ?? "") - Date.parse(b.started_at ?? ""));
  const xs: number[] = [];
  const all: (number | null)[] = [];
  const failed: (number | null)[] = [];
  const sla: (number | null)[] = [];
  let lastX = -Infinity;
  for (const r of sorted) {
    // uPlot needs strictly increasing x; nudge runs started in the same millisecond.
    let x = Date.parse(r.started_at ?? "") / 1000;
    if (x <= lastX) x = lastX + 0.001;
    lastX = x;
    const y = (runDuration(r) ?? 0) / 1000;
    xs.push(x);
    all.push(y);
    failed.push(r.status === "FAILED" ? y : null);
    sla.push(r.sla_breached ? y : null);
  }
  return {
    data: [xs, all, failed, sla],
    count: xs.length,
    failures: failed.filter((v) => v !== null).length,
    breaches: sla.filter((v) => v !== null).length,
  };
}

function pointsOnly(label: string, stroke: string, size: number, hollow = false): uPlot.Series {
  return { label, stroke, paths: () => null, points: { show: true, size, width: 2, fill: hollow ? "transparent" : stroke, stroke } };
}

/** Duration of recent runs (uPlot, loaded only with this view). */
export default function DurationChart({ runs }: { runs: RunRecord[] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const { data, count, failures, breaches } = toData(runs);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const text = cssVar("--fg-muted", "#666");
    const grid = cssVar("--border", "#ddd");
    const opts: uPlot.Options = {
      width: Math.max(300, el.clientWidth),
      height: 220,
      series: [
        {},
        { label: "duration (s)", stroke: cssVar("--tone-run", "#2563eb"), width: 2, points: { show: true, size: 5 } },
        pointsOnly("failed", cssVar("--tone-bad", "#dc2626"), 10),
        pointsOnly("SLA breached", cssVar("--tone-warn", "#d97706"), 16, true),
      ],
      axes: [
        { stroke: text, grid: { stroke: grid } },
        { stroke: text, grid: { stroke: grid }, label: "seconds", size: 60 },
      ],
      scales: {
        // One run (or runs in one instant) would stretch the axis over years: pad it by 30 s.
        x: { time: true, range: (_u, min, max) => (max - min < 60 ? [min - 30, max + 30] : [min, max]) },
        y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] },
      },
    };
    plot.current = new uPlot(opts, data, el);
    const ro = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(300, el.clientWidth), height: 220 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);

  useEffect(() => {
    plot.current?.setData(data);
  }, [runs]);

  return (
    <figure class="chart">
      <div ref={box} class="chart-box" role="img" aria-label={`Durations of ${plural(count, "run")}, ${failures} failed, ${breaches} over SLA`} />
      <figcaption class="sub">
        Duration of the last {plural(count, "run")}. Failed runs are marked with a red dot (✕ {failures}), SLA breaches with an amber
        ring (! {breaches}).
      </figcaption>
    </figure>
  );
}
