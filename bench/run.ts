/**
 * `npm run bench [-- --quick] [filter...]`: runs every bench/*.bench.ts (or
 * those whose file name contains one of the filters), prints a table per
 * section and writes docs/PERFORMANCE.md.
 *
 * Each section sits between `<!-- bench:<file> -->` markers in that file, so
 * a run replaces only the sections it measured and keeps the others (each
 * section says when and on what it was measured). Above the sections the
 * file gets a generated summary of every target (met or missed), notes and
 * the fixes made (docs/perf/NOTES.md and FIXES.md, written by hand) and links
 * to the plots in docs/perf/.
 *
 * `--quick` sets SVC_BENCH_QUICK=1: benchmarks that read it use fewer
 * repetitions and shorter windows (bench/helpers/stats.ts `quick()`).
 *
 * The soak (bench/soak.bench.ts, 30 minutes) runs only when a filter names
 * it: `npm run bench -- soak [--minutes N]` (`--minutes` sets SVC_SOAK_MINUTES).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Bench, BenchResult, BenchSection } from "./types.js";

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const DOC = join(BENCH_DIR, "..", "docs", "PERFORMANCE.md");
const PERF_DIR = join(BENCH_DIR, "..", "docs", "perf");
/** Sections a full run leaves out (they take long); a filter that names them runs them. */
const OPT_IN = ["soak.bench.ts", "indexes.bench.ts"];
/** Hand-written parts, in this order: what the figures say, then the fixes made. */
const HAND_WRITTEN = ["NOTES.md", "FIXES.md"].map((f) => join(PERF_DIR, f));

interface Ran {
  file: string;
  section: BenchSection;
  measured: string;
}

function machine(): string {
  const list = cpus();
  const model = list[0]?.model.replace(/\s+/g, " ").trim() ?? "unknown CPU";
  const gb = (totalmem() / 1024 ** 3).toFixed(1);
  return `${model}, ${list.length} cores, ${gb} GB RAM`;
}

function formatValue(r: BenchResult): string {
  const v = Math.abs(r.value) >= 100 || Number.isInteger(r.value) ? r.value.toFixed(0) : r.value.toPrecision(3);
  return `${v} ${r.unit}`;
}

function verdict(r: BenchResult): string {
  return r.ok === undefined ? "" : r.ok ? "ok" : "miss";
}

function printSection(file: string, s: BenchSection): void {
  const rows = s.results.map((r) => [r.name, formatValue(r), r.target ?? "", verdict(r), r.notes ?? ""]);
  const head = ["result", "value", "target", "", "notes"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  console.log(`\n== ${s.title} (${file})`);
  console.log(line(head));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of rows) console.log(line(row));
}

function markdown(ran: Ran): string {
  const { file, section, measured } = ran;
  const esc = (t: string) => t.replace(/\|/g, "\\|");
  const rows = section.results
    .map((r) => `| ${esc(r.name)} | ${esc(formatValue(r))} | ${esc(r.target ?? "")} | ${verdict(r)} | ${esc(r.notes ?? "")} |`)
    .join("\n");
  return [
    `<!-- bench:${file} -->`,
    `## ${section.title}`,
    "",
    `_${measured}_`,
    "",
    section.method,
    "",
    "| Result | Value | Target | | Notes |",
    "|---|---|---|---|---|",
    rows,
    `<!-- /bench:${file} -->`,
  ].join("\n");
}

const HEADER = `# Performance

Written by \`npm run bench\` (bench/run.ts), which runs every \`bench/*.bench.ts\`;
\`npm run bench -- <filter>\` re-runs the sections whose file name contains the
filter and keeps the others. The machines are shared and noisy: each section
compares against a physical limit measured in the same run where it can, and
reports medians of repeated runs.
`;

/** Every result row with a target, from the sections' markdown: the summary at the top. */
function targetSummary(sections: string[]): string {
  const rows: string[] = [];
  let met = 0;
  let missed = 0;
  for (const md of sections) {
    const title = /^## (.*)$/m.exec(md)?.[1] ?? "";
    for (const m of md.matchAll(/^\| (.+?) \| (.+?) \| (.+?) \| (ok|miss) \|/gm)) {
      if (m[4] === "ok") met++;
      else missed++;
      rows.push(`| ${title} | ${m[1]} | ${m[2]} | ${m[3]} | ${m[4] === "ok" ? "met" : "**missed**"} |`);
    }
  }
  if (rows.length === 0) return "";
  return [
    "## Targets",
    "",
    `${met} met, ${missed} missed (generated from the sections below; each says when it was measured).`,
    "",
    "| Section | Result | Value | Target | |",
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

/** The hand-written notes and fixes (docs/perf/NOTES.md, FIXES.md) and the plots in docs/perf/. */
function fixesAndPlots(): string {
  const parts: string[] = [];
  for (const f of HAND_WRITTEN) if (existsSync(f)) parts.push(readFileSync(f, "utf8").trim());
  const plots = existsSync(PERF_DIR) ? readdirSync(PERF_DIR).filter((f) => f.endsWith(".svg")).sort() : [];
  if (plots.length > 0) parts.push(["## Plots", "", ...plots.map((f) => `![${f}](perf/${f})`)].join("\n\n"));
  return parts.join("\n\n");
}

/** Replaces the sections that ran; keeps the others while their bench file exists. */
function writeDoc(ran: Ran[]): void {
  const existing = existsSync(DOC) ? readFileSync(DOC, "utf8") : "";
  const sections = new Map<string, string>();
  for (const m of existing.matchAll(/<!-- bench:(\S+) -->[\s\S]*?<!-- \/bench:\1 -->/g)) {
    if (existsSync(join(BENCH_DIR, m[1]!))) sections.set(m[1]!, m[0]);
  }
  for (const r of ran) sections.set(r.file, markdown(r));
  const ordered = [...sections.keys()].sort().map((k) => sections.get(k)!);
  const generated = [targetSummary(ordered), fixesAndPlots()].filter((x) => x !== "").join("\n\n");
  writeFileSync(DOC, `${HEADER}\n${generated ? `${generated}\n\n` : ""}${ordered.join("\n\n")}\n`);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((a) => a !== "--");
  // --minutes N / --minutes=N: the soak's length.
  for (let i = args.length - 1; i >= 0; i--) {
    const m = /^--minutes(?:=(.*))?$/.exec(args[i]!);
    if (!m) continue;
    const value = m[1] ?? args[i + 1];
    if (value === undefined || !(Number(value) > 0)) {
      console.error(`bench: --minutes needs a number of minutes greater than 0, got ${value ?? "nothing"}`);
      process.exitCode = 2;
      return;
    }
    process.env.SVC_SOAK_MINUTES = value;
    args.splice(i, m[1] === undefined ? 2 : 1);
  }
  const quickMode = args.includes("--quick");
  if (quickMode) process.env.SVC_BENCH_QUICK = "1";
  const filters = args.filter((a) => !a.startsWith("--"));
  const runStarted = Date.now();
  const files = readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith(".bench.ts"))
    .sort()
    .filter((f) => (filters.length === 0 ? !OPT_IN.includes(f) : filters.some((x) => f.includes(x))));
  if (files.length === 0) {
    console.error(`bench: no bench/*.bench.ts matches ${filters.join(", ")}`);
    process.exitCode = 2;
    return;
  }
  const host = machine();
  console.log(`bench: ${files.length} file(s) on ${host}, Node ${process.version}, load ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  const ran: Ran[] = [];
  let failed = 0;
  for (const file of files) {
    const started = Date.now();
    try {
      const mod = (await import(pathToFileURL(join(BENCH_DIR, file)).href)) as { default: Bench };
      const section = await mod.default();
      const load = loadavg()[0]!.toFixed(2);
      const measured = `Measured ${new Date().toISOString().slice(0, 10)} on ${host}; Node ${process.version}; load average ${load} at the end; ${((Date.now() - started) / 1000).toFixed(0)} s${quickMode ? "; --quick" : ""}.`;
      ran.push({ file, section, measured });
      printSection(file, section);
    } catch (e) {
      failed++;
      console.error(`\nbench: ${file} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    }
  }
  writeDoc(ran);
  console.log(`\nbench: wrote ${DOC} (${((Date.now() - runStarted) / 1000).toFixed(0)} s in all${quickMode ? ", --quick" : ""})`);
  if (failed > 0) process.exitCode = 1;
}

await main();
