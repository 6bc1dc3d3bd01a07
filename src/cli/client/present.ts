/**
 * How client commands show data to people: aligned tables, local times,
 * durations, and colour only when stdout is a terminal and NO_COLOR is unset
 * (FORCE_COLOR=1 forces it, e.g. for `| less -R`).
 */
import { isAbsolute, relative } from "node:path";
import type { CliContext } from "../context.js";
import { processOutput } from "../output.js";

export interface Style {
  enabled: boolean;
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
  /** A stable colour per index, for per-job prefixes. */
  nth(i: number, s: string): string;
}

const sgr = (code: string) => (s: string) => `\x1b[${code}m${s}\x1b[0m`;
const PALETTE = ["36", "33", "32", "35", "34", "96", "93", "92", "95", "94"];
const plain = (s: string) => s;

export function colorEnabled(ctx: CliContext): boolean {
  if (ctx.env.NO_COLOR !== undefined && ctx.env.NO_COLOR !== "") return false;
  if (ctx.env.FORCE_COLOR !== undefined && ctx.env.FORCE_COLOR !== "" && ctx.env.FORCE_COLOR !== "0") return true;
  return ctx.output === processOutput && process.stdout.isTTY === true;
}

export function styleFor(ctx: CliContext): Style {
  if (!colorEnabled(ctx)) {
    return { enabled: false, bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain, nth: (_i, s) => s };
  }
  return {
    enabled: true,
    bold: sgr("1"),
    dim: sgr("2"),
    red: sgr("31"),
    green: sgr("32"),
    yellow: sgr("33"),
    cyan: sgr("36"),
    nth: (i, s) => sgr(PALETTE[i % PALETTE.length]!)(s),
  };
}

/** A run status in its colour: green SUCCESS, red FAILED, yellow for the waiting ones. */
export function statusText(style: Style, status: string | null | undefined): string {
  if (!status) return "-";
  if (status === "SUCCESS") return style.green(status);
  if (status === "FAILED") return style.red(status);
  if (status === "RUNNING") return style.cyan(status);
  if (status === "RETRYING" || status === "PENDING") return style.yellow(status);
  return status;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;
const width = (s: string) => s.replace(ANSI, "").length;

/** Columns padded to the widest cell; the last column is not padded. */
export function table(headers: string[], rows: string[][], style: Style): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => width(r[i] ?? ""))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + " ".repeat(widths[i]! - width(c))))
      .join("  ")
      .trimEnd();
  return [style.bold(line(headers)), ...rows.map(line)].join("\n");
}

const pad = (n: number) => String(n).padStart(2, "0");

/**
 * `2026-11-23 02:30:00 +01:00` in the machine's zone (TZ), `UTC` for offset
 * zero, or `-`. Date getters, not Intl: Intl's first use costs tens of ms,
 * a large share of `svc status` on a busy machine.
 */
export function localTime(iso: string | null | undefined): string {
  if (!iso) return "-";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const off = -d.getTimezoneOffset();
  const zone = off === 0 ? "UTC" : `${off < 0 ? "-" : "+"}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${zone}`;
}

/** A path as people want to read it: relative to the cwd when below it, else absolute. */
export function shownPath(cwd: string, file: string): string {
  if (!isAbsolute(file)) return file;
  const rel = relative(cwd, file);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}

/** `850ms`, `12.4s`, `3m04s`, `2h05m`, or `-`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "-";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** Free text in one table cell: one line, at most `max` characters. */
export function cell(text: string | null | undefined, max = 60): string {
  if (text === null || text === undefined || text === "") return "-";
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** `2027-03-14T03:00:00-04:00 EDT` (the API's local form) as `2027-03-14 03:00:00 EDT`. */
export function zoneTime(local: string | null | undefined): string | null {
  const m = local ? /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})\S* (.+)$/.exec(local) : null;
  return m ? `${m[1]} ${m[2]} ${m[3]}` : null;
}
