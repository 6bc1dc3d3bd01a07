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
  for (let t = Math.floor(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(+t.toPrecision(12));
  return out;
}

function logTicks(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e);
  return out;
}

export function lineChart(c: Chart): string {
  const pts = c.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const ys = pts.map(([, y]) => y).concat(c.target ? [c.target.y] : []);
  const xs = pts.map(([x]) => x);
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  let [y0, y1] = [c.logY ? Math.min(...ys) : Math.min(0, ...ys), Math.max(...ys)];
  const xt = c.logX ? logTicks(x0, x1) : linTicks(x0, x1);
  const yt = c.logY ? logTicks(Math.max(y0, 1e-9), y1) : linTicks(y0, y1 * 1.05);
  [x0, x1] = [xt[0]!, xt[xt.length - 1]!];
  [y0, y1] = [yt[0]!, yt[yt.length - 1]!];
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const fx = (x: number) => M.left + (c.logX ? (Math.log10(x) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0)) : (x - x0) / (x1 - x0 || 1)) * pw;
  const fy = (y: number) =>
    M.top + ph - (c.logY ? (Math.log10(Math.max(y, y0)) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0)) : (y - y0) / (y1 - y0 || 1)) * ph;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2 - M.right / 2 + M.left / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(c.title)}</text>`);
  for (const t of xt) {
    const x = fx(t).toFixed(1);
    out.push(`<line x1="${x}" y1="${M.top}" x2="${x}" y2="${M.top + ph}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${x}" y="${M.top + ph + 16}" text-anchor="middle">${fmt(t)}</text>`);
  }
  for (const t of yt) {
    const y = fy(t).toFixed(1);
    out.push(`<line x1="${M.left}" y1="${y}" x2="${M.left + pw}" y2="${y}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${M.left - 6}" y="${(+y + 4).toFixed(1)}" text-anchor="end">${fmt(t)}</text>`);
  }
  out.push(`<rect x="${M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${M.left + pw / 2}" y="${H - 12}" text-anchor="middle">${esc(c.xLabel)}${c.logX ? " (log scale)" : ""}</text>`);
  out.push(
    `<text x="16" y="${M.top + ph / 2}" text-anchor="middle" transform="rotate(-90 16 ${M.top + ph / 2})">${esc(c.yLabel)}${c.logY ? " (log scale)" : ""}</text>`,
  );
  if (c.target && c.target.y >= y0 && c.target.y <= y1) {
    const y = fy(c.target.y).toFixed(1);
    out.push(`<line x1="${M.left}" y1="${y}" x2="${M.left + pw}" y2="${y}" stroke="#888" stroke-dasharray="6 4"/>`);
    out.push(`<text x="${M.left + pw + 6}" y="${(+y + 4).toFixed(1)}" fill="#555">${esc(c.target.label)}</text>`);
  }
  c.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const p = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${p.map(([x, y]) => `${fx(x).toFixed(1)},${fy(y).toFixed(1)}`).join(" ")}"/>`);
    for (const [x, y] of p) {
      out.push(`<circle cx="${fx(x).toFixed(1)}" cy="${fy(y).toFixed(1)}" r="3.5" fill="${color}"/>`);
      out.push(`<text x="${(fx(x) + 5).toFixed(1)}" y="${(fy(y) - 6).toFixed(1)}" fill="${color}" font-size="10">${fmt(y)}</text>`);
    }
    const ly = M.top + 14 + i * 18;
    out.push(`<line x1="${M.left + pw + 8}" y1="${ly + 30}" x2="${M.left + pw + 26}" y2="${ly + 30}" stroke="${color}" stroke-width="2"/>`);
    out.push(`<text x="${M.left + pw + 30}" y="${ly + 34}">${esc(s.name)}</text>`);
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}

export function writeChart(path: string, c: Chart): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, lineChart(c));
}
