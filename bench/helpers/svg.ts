/**
 * Minimal SVG line charts for docs/perf/ (no dependency): linear or log10
 * axes, one polyline per series with labelled points, an optional dashed
 * horizontal target line.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export interface Series {
  name: string;
  points: Array<[x: number, y: number]>;
}

export interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  logX?: boolean;
  logY?: boolean;
  /** A dashed horizontal line, e.g. a target. */
  target?: { y: number; label: string };
}

const W = 640;
const H = 360;
const M = { left: 70, right: 150, top: 40, bottom: 50 };
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function fmt(v: number): string {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1_000_000) return `${+(v / 1_000_000).toPrecision(3)}M`;
  if (a >= 10_000) return `${+(v / 1_000).toPrecision(3)}k`;
  if (a >= 100) return String(Math.round(v));
  return String(+v.toPrecision(3));
}

/** "Nice" linear ticks covering [lo, hi]. */
function linTicks(lo: number, hi: number): number[] {
  const span = hi - lo || Math.abs(hi) || 1;
  const raw = span / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => span / s <= 6) ?? 10 * mag;
  const out: number[] = [];
  // From the tick at or below lo to the tick at or above hi: every point inside the axis.
  const last = Math.ceil(hi / step - 1e-9) * step;
  for (let t = Math.floor(lo / step) * step; t <= last + step * 1e-9; t += step) out.push(+t.toPrecision(12));
  return out;
}

function logTicks(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e);
  return out;
}

/** Where a plot area sits in the picture. */
interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * One plot area: grid, ticks, axes labels, series and the legend to its right.
 * `dots`: a circle and its value at every point (few points); without, the bare line (time series).
 */
function plotArea(c: Omit<Chart, "title"> & { dots: boolean; xRange?: [number, number] }, box: Box, xAxisText: boolean): string[] {
  const pts = c.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const ys = pts.map(([, y]) => y).concat(c.target ? [c.target.y] : []);
  const xs = pts.map(([x]) => x).concat(c.xRange ?? []);
  if (xs.length === 0) xs.push(0, 1);
  if (ys.length === 0) ys.push(0, 1);
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  let [y0, y1] = [c.logY ? Math.min(...ys) : Math.min(0, ...ys), Math.max(...ys)];
  const xt = c.logX ? logTicks(x0, x1) : linTicks(x0, x1);
  const yt = c.logY ? logTicks(Math.max(y0, 1e-9), y1) : linTicks(y0, y1 * 1.05);
  [x0, x1] = [xt[0]!, xt[xt.length - 1]!];
  [y0, y1] = [yt[0]!, yt[yt.length - 1]!];
  const { left, top, width: pw, height: ph } = box;
  const fx = (x: number) => left + (c.logX ? (Math.log10(x) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0)) : (x - x0) / (x1 - x0 || 1)) * pw;
  const fy = (y: number) =>
    top + ph - (c.logY ? (Math.log10(Math.max(y, y0)) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0)) : (y - y0) / (y1 - y0 || 1)) * ph;
  const out: string[] = [];
  for (const t of xt) {
    const x = fx(t).toFixed(1);
    out.push(`<line x1="${x}" y1="${top}" x2="${x}" y2="${top + ph}" stroke="#e5e5e5"/>`);
    if (xAxisText) out.push(`<text x="${x}" y="${top + ph + 16}" text-anchor="middle">${fmt(t)}</text>`);
  }
  for (const t of yt) {
    const y = fy(t).toFixed(1);
    out.push(`<line x1="${left}" y1="${y}" x2="${left + pw}" y2="${y}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${left - 6}" y="${(+y + 4).toFixed(1)}" text-anchor="end">${fmt(t)}</text>`);
  }
  out.push(`<rect x="${left}" y="${top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  if (xAxisText) out.push(`<text x="${left + pw / 2}" y="${top + ph + 38}" text-anchor="middle">${esc(c.xLabel)}${c.logX ? " (log scale)" : ""}</text>`);
  out.push(
    `<text x="16" y="${top + ph / 2}" text-anchor="middle" transform="rotate(-90 16 ${top + ph / 2})">${esc(c.yLabel)}${c.logY ? " (log scale)" : ""}</text>`,
  );
  if (c.target && c.target.y >= y0 && c.target.y <= y1) {
    const y = fy(c.target.y).toFixed(1);
    out.push(`<line x1="${left}" y1="${y}" x2="${left + pw}" y2="${y}" stroke="#888" stroke-dasharray="6 4"/>`);
    out.push(`<text x="${left + pw - 4}" y="${(+y - 4).toFixed(1)}" text-anchor="end" fill="#555">${esc(c.target.label)}</text>`);
  }
  c.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const p = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="${c.dots ? 2 : 1.5}" points="${p.map(([x, y]) => `${fx(x).toFixed(1)},${fy(y).toFixed(1)}`).join(" ")}"/>`,
    );
    if (c.dots) {
      for (const [x, y] of p) {
        out.push(`<circle cx="${fx(x).toFixed(1)}" cy="${fy(y).toFixed(1)}" r="3.5" fill="${color}"/>`);
        out.push(`<text x="${(fx(x) + 5).toFixed(1)}" y="${(fy(y) - 6).toFixed(1)}" fill="${color}" font-size="10">${fmt(y)}</text>`);
      }
    }
    const ly = top + 14 + i * 18;
    out.push(`<line x1="${left + pw + 8}" y1="${ly}" x2="${left + pw + 26}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    out.push(`<text x="${left + pw + 30}" y="${ly + 4}">${esc(s.name)}</text>`);
  });
  return out;
}

function svgOpen(w: number, h: number, title: string, titleX: number): string[] {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif" font-size="12">`,
    `<rect width="${w}" height="${h}" fill="white"/>`,
    `<text x="${titleX}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`,
  ];
}

export function lineChart(c: Chart): string {
  const box = { left: M.left, top: M.top, width: W - M.left - M.right, height: H - M.top - M.bottom };
  const out = svgOpen(W, H, c.title, W / 2 - M.right / 2 + M.left / 2);
  out.push(...plotArea({ ...c, dots: true }, box, true));
  out.push("</svg>");
  return out.join("\n") + "\n";
}

/** One panel of a stacked chart: its own y axis and series, the x axis shared with the others. */
export interface Panel {
  yLabel: string;
  series: Series[];
  logY?: boolean;
  target?: { y: number; label: string };
}

export interface PanelChart {
  title: string;
  xLabel: string;
  panels: Panel[];
  /** Lines under the title (what ran, where). */
  subtitle?: string;
}

const PANEL_H = 150;
const PANEL_GAP = 26;

/** Panels stacked over one x axis (a time series each, no dots): for long samplings such as the soak. */
export function panelChart(c: PanelChart): string {
  const w = 760;
  const right = 190;
  const top = c.subtitle ? 58 : 40;
  const h = top + c.panels.length * (PANEL_H + PANEL_GAP) - PANEL_GAP + 56;
  const out = svgOpen(w, h, c.title, (w - right + M.left) / 2);
  if (c.subtitle) out.push(`<text x="${(w - right + M.left) / 2}" y="42" text-anchor="middle" fill="#555">${esc(c.subtitle)}</text>`);
  // Every panel spans the same x range: the first and last x over all panels.
  const xs = c.panels.flatMap((p) => p.series.flatMap((s) => s.points.map(([x]) => x))).filter(Number.isFinite);
  const xRange: [number, number] | undefined = xs.length > 0 ? [Math.min(...xs), Math.max(...xs)] : undefined;
  c.panels.forEach((p, i) => {
    const box = { left: M.left, top: top + i * (PANEL_H + PANEL_GAP), width: w - M.left - right, height: PANEL_H };
    out.push(...plotArea({ xLabel: c.xLabel, yLabel: p.yLabel, series: p.series, logY: p.logY, target: p.target, dots: false, xRange }, box, i === c.panels.length - 1));
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}

export function writePanels(path: string, c: PanelChart): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, panelChart(c));
}

export function writeChart(path: string, c: Chart): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, lineChart(c));
}
