import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import Database from "better-sqlite3";
import { chromium, type Page } from "playwright-core";
import { openStore } from "../src/store/index.js";
import type { Store } from "../src/store/api.js";
import { BUILD_DIR, ensureBuild, startDaemon } from "./helpers/daemon.js";
import { median, pct, quick, round } from "./helpers/stats.js";
import type { BenchResult, BenchSection } from "./types.js";

/**
 * The dashboard at scale (issue 23 item 5): the gzipped JavaScript of the
 * build; the timeline's range query in the store on a history of 1,000,000
 * runs; and the time headless Chromium takes from navigation start to the
 * first paint of the overview, the timeline and the graph, each served by a
 * real daemon holding 10,000 jobs and those 1,000,000 runs.
 */

const ROOT = resolve(import.meta.dirname, "..");
const WEB = join(ROOT, "dist", "web");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const Q = quick();
const JOBS = Q ? 2_000 : 10_000;
const RUNS = Q ? 200_000 : 1_000_000;
const DAYS = 100;
const LOADS = Q ? 3 : 5;
const REPS = Q ? 10 : 30;
const SIZE_TARGET_KB = 150;
const PAINT_TARGET_MS = 1000;
const DAY = 86_400_000;
const HOUR = 3_600_000;

function bundleSizes(): BenchResult[] {
  // Always from the current sources: the figures must describe this tree.
  execFileSync(process.execPath, [join(ROOT, "scripts", "build-web.mjs")], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
  const html = readFileSync(join(WEB, "index.html"), "utf8");
  const js = readdirSync(join(WEB, "assets")).filter((f) => f.endsWith(".js"));
  const gz = (f: string) => gzipSync(readFileSync(join(WEB, "assets", f)), { level: 9 }).length / 1024;
  const total = js.reduce((n, f) => n + gz(f), 0);
  const entry = js.filter((f) => html.includes(`assets/${f}`)).reduce((n, f) => n + gz(f), 0);
  const lazy = js.filter((f) => !html.includes(`assets/${f}`)).map((f) => `${f.replace(/-[\w-]{8}\.js$/, "")} ${round(gz(f), 1)} KB`);
  return [
    {
      name: "dashboard JS loaded by the first page, gzipped",
      value: round(entry, 1),
      unit: "KB",
      target: `< ${SIZE_TARGET_KB} KB`,
      ok: entry < SIZE_TARGET_KB,
      notes: `the rest loads with its view: ${lazy.join(", ")}`,
    },
    { name: "dashboard JS, all chunks, gzipped", value: round(total, 1), unit: "KB", notes: `${js.length} chunks` },
  ];
}

/** 10,000 jobs in groups of ten: a daily root (times spread over the day) and nine `after:` jobs each. */
function bigProject(): string {
  const lines = ["defaults:", "  timezone: Europe/Berlin", "jobs:"];
  for (let i = 0; i < JOBS; i++) {
    const name = `job-${String(i).padStart(5, "0")}`;
    lines.push(`  ${name}:`, `    description: Benchmark job ${i}`, `    command: "true"`);
    if (i % 10 === 0) lines.push(`    frequency: daily`, `    time: "${String(Math.floor(i / 10) % 24).padStart(2, "0")}${String(i % 60).padStart(2, "0")}"`);
    else lines.push(`    frequency: after:job-${String(i - (i % 10)).padStart(5, "0")}`);
    lines.push(`    tags: [bench, group-${Math.floor(i / 10) % 10}]`);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * RUNS runs over the last DAYS days, written with SQL into a database the
 * store created (its schema and migrations; through runs.create they take
 * minutes). One run every 8.6 s on average across JOBS jobs, round robin:
 * 10,000 in any 24 hours. 80 % SUCCESS, 10 % FAILED, 10 % SKIPPED by
 * concurrency (never started: an instant), durations 1 s to 10 min, 1 %
 * over SLA. Secondary indexes are dropped for the load and built again.
 */
function seedRuns(file: string, runs: number, now: number, days = DAYS): void {
  openStore({ path: file, busyTimeoutMs: 5000, walAutocheckpoint: 1000 }).close();
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("cache_size = -65536");
  const indexes = db
    .prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND tbl_name = 'job_runs'")
    .all() as { name: string; sql: string }[];
  for (const ix of indexes) db.exec(`DROP INDEX ${ix.name}`);
  const start = now - days * DAY;
  const step = (days * DAY) / runs;
  const insert = db.prepare(
    `WITH RECURSIVE n (i) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?),
     r AS (SELECT i, ? + i * ? AS t,
             CASE (i * 7) % 10 WHEN 3 THEN 'FAILED' WHEN 6 THEN 'SKIPPED' ELSE 'SUCCESS' END AS st,
             1000 + (i * 7919) % 599000 AS dur FROM n)
     INSERT INTO job_runs (job_name, status, attempt, "trigger", triggered_by, cycle_id, tags, created_at,
                           started_at, finished_at, exit_code, sla_breached, duration_ms, error)
     SELECT 'job-' || printf('%05d', i % ${JOBS}), st, 1, 'schedule', 'scheduler', 'cycle-' || (i / 10), '["bench"]',
            strftime('%Y-%m-%dT%H:%M:%fZ', t / 1000.0, 'unixepoch'),
            CASE WHEN st <> 'SKIPPED' THEN strftime('%Y-%m-%dT%H:%M:%fZ', t / 1000.0, 'unixepoch') END,
            strftime('%Y-%m-%dT%H:%M:%fZ', (t + CASE WHEN st = 'SKIPPED' THEN 0 ELSE dur END) / 1000.0, 'unixepoch'),
            CASE st WHEN 'SUCCESS' THEN 0 WHEN 'FAILED' THEN 1 END,
            CASE WHEN i % 100 = 0 THEN 1 ELSE 0 END,
            CASE WHEN st <> 'SKIPPED' THEN dur END,
            CASE st WHEN 'FAILED' THEN 'exit code 1' WHEN 'SKIPPED' THEN 'concurrency forbid' END
     FROM r`,
  );
  const chunk = db.transaction((from: number, to: number) => insert.run(from, to, start, step));
  for (let i = 0; i < runs; i += 100_000) chunk(i, Math.min(runs, i + 100_000));
  for (const ix of indexes) db.exec(ix.sql);
  db.close();
}

function timeIt(fn: () => unknown, reps: number): number[] {
  return timeAll([fn], reps)[0]!;
}

/** Each function `reps` times, taking turns, so that the machine's changing load weighs on all alike. */
function timeAll(fns: (() => unknown)[], reps: number): number[][] {
  for (let i = 0; i < 3; i++) for (const fn of fns) fn(); // the page cache and the statements
  const ms = fns.map(() => [] as number[]);
  for (let i = 0; i < reps; i++) {
    fns.forEach((fn, k) => {
      const t = performance.now();
      fn();
      ms[k]!.push(performance.now() - t);
    });
  }
  return ms;
}

/**
 * store.timeline.range on the seeded history, against the floor of reading
 * the same number of rows straight off the started_at index (what any query
 * returning those runs must at least do), and the same 24 h window on a
 * history ten times shorter (the query must not grow with history).
 */
function rangeQueries(file: string, smallFile: string, now: number): BenchResult[] {
  const store = openStore({ path: file, busyTimeoutMs: 5000, walAutocheckpoint: 1000 });
  const small = openStore({ path: smallFile, busyTimeoutMs: 5000, walAutocheckpoint: 1000 });
  const db = new Database(file, { readonly: true });
  const iso = (t: number) => new Date(t).toISOString();
  const range = (s: Store, hours: number, extra: object = {}) => () =>
    s.timeline.range({ from: iso(now - hours * HOUR), to: iso(now), limit: 10_000, ...extra });
  const floor = db
    .prepare(`SELECT id, job_name, status, attempt, "trigger", started_at, finished_at, exit_code, sla_breached FROM job_runs
              WHERE started_at >= ? AND started_at < ? ORDER BY started_at DESC LIMIT 10000`)
    .raw(true);
  const results: BenchResult[] = [];
  try {
    const [day, dayFloor, daySmall] = timeAll([range(store, 24), () => floor.all(iso(now - DAY), iso(now)), range(small, 24)], REPS) as [number[], number[], number[]];
    const n24 = range(store, 24)().runs.length;
    results.push(
      { name: `timeline range, last 24 h (${n24.toLocaleString("en")} runs), ${(RUNS / 1e6).toString()} M runs in history: median`, value: round(median(day), 1), unit: "ms" },
      { name: "timeline range, last 24 h: p99", value: round(pct(day, 99), 1), unit: "ms", notes: `n=${REPS}; the floor's p99 ${round(pct(dayFloor, 99), 1)} ms` },
      {
        name: "timeline range, last 24 h / reading as many rows off the started_at index (the floor), medians",
        value: round(median(day) / median(dayFloor), 2),
        unit: "x",
        target: "<= 2x",
        ok: median(day) / median(dayFloor) <= 2,
        notes: `floor ${round(median(dayFloor), 1)} ms`,
      },
      {
        name: `timeline range, last 24 h over ${DAYS} days of history / over ${DAYS / 10} days (ten times fewer runs), medians`,
        value: round(median(day) / median(daySmall), 2),
        unit: "x",
        target: "<= 1.5x",
        ok: median(day) / median(daySmall) <= 1.5,
        notes: `${round(median(daySmall), 1)} ms: the query does not grow with the history`,
      },
    );
    for (const [label, fn] of [
      ["last 6 h", range(store, 6)],
      ["last 7 d, first 10,000 (truncated)", range(store, 7 * 24)],
      ["last 31 d, first 10,000 (truncated)", range(store, 31 * 24)],
      ["last 31 d, one job", range(store, 31 * 24, { jobs: ["job-00042"] })],
      ["last 7 d, name contains \"job-0004\" (10 jobs)", range(store, 7 * 24, { match: "job-0004" })],
    ] as const) {
      const ms = timeIt(fn, Math.max(5, REPS / 3));
      results.push({ name: `timeline range, ${label}: median`, value: round(median(ms), 1), unit: "ms", notes: `p99 ${round(pct(ms, 99), 1)} ms` });
    }
    // Without the indexes of migration 3 and the split: "started before `to`" off the started_at index alone.
    const naive = db.prepare(
      `SELECT id FROM job_runs WHERE started_at < ? AND (finished_at >= ? OR status IN ('PENDING','RUNNING','RETRYING')) ORDER BY started_at DESC LIMIT 10000`,
    );
    const naiveMs = timeIt(() => naive.all(iso(now - 30 * DAY), iso(now - 31 * DAY)), 3);
    results.push({
      name: "naive overlap query (started_at index only), a 24 h window a month back: median",
      value: round(median(naiveMs), 1),
      unit: "ms",
      notes: "for comparison: what the range query avoids",
    });
    const split = timeIt(() => store.timeline.range({ from: iso(now - 31 * DAY), to: iso(now - 30 * DAY), limit: 10_000 }), 5);
    results.push({ name: "timeline range on that window: median", value: round(median(split), 1), unit: "ms" });
  } finally {
    db.close();
    store.close();
    small.close();
  }
  return results;
}

/** Navigation start -> `ready` (a JS expression) holds and a frame has been painted, in the page's performance clock. */
function paintedWhen(ready: string): string {
  return `new Promise((resolve) => {
    const check = () => (${ready}) ? requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0)) : requestAnimationFrame(check);
    check();
  })`;
}

const VIEWS: { name: string; hash: string; ready: string; api: string }[] = [
  {
    name: "overview",
    hash: "#/",
    ready: `document.querySelector('table.jobs[aria-rowcount="${JOBS + 1}"] tbody tr[data-row]')`,
    api: "/api/jobs",
  },
  {
    name: "timeline (last 24 h)",
    hash: "#/timeline",
    ready: `document.querySelector('.tl-row .tl-bar, .tl-row .tl-cluster') && document.querySelectorAll('.tl-row').length > 10`,
    api: "/api/timeline",
  },
  {
    name: "graph",
    hash: "#/graph",
    ready: `document.querySelector('svg.graph[data-nodes="${JOBS}"] a.node')`,
    api: "/api/dag",
  },
  {
    name: "graph, nodes coloured by their last run",
    hash: "#/graph",
    ready: `document.querySelector('svg.graph[data-nodes="${JOBS}"] a.node[data-status="SUCCESS"]')`,
    api: "/api/jobs",
  },
];

async function firstPaints(dbFile: string): Promise<BenchResult[]> {
  if (!existsSync(CHROMIUM)) return [{ name: "first paint", value: Number.NaN, unit: "ms", notes: `${CHROMIUM} missing: skipped` }];
  // The private build (helpers/daemon.ts) serves the dashboard this bench just built.
  ensureBuild();
  const web = join(BUILD_DIR, "dist", "web");
  rmSync(web, { recursive: true, force: true }); // an old copy, or the link of a previous run (rm removes the link, not its target)
  symlinkSync(WEB, web);
  const dir = mkdtempSync(join(tmpdir(), "svc-web-bench-"));
  writeFileSync(join(dir, "svc.yaml"), bigProject());
  mkdirSync(join(dir, ".svc"), { mode: 0o700 });
  execFileSync("cp", [dbFile, join(dir, ".svc", "svc.db")]);
  const daemon = await startDaemon(dir, { keepData: true, timeoutMs: 180_000 });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
  });
  const results: BenchResult[] = [];
  try {
    const page: Page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const url = `http://${daemon.addr}/`;
    for (const view of VIEWS) {
      const totals: number[] = [];
      const api: number[] = [];
      for (let i = 0; i < LOADS + 1; i++) {
        await page.goto("about:blank");
        await page.goto(url + view.hash);
        const t = (await page.evaluate(paintedWhen(view.ready))) as number;
        const a = (await page.evaluate(
          `(performance.getEntriesByType("resource").find((e) => new URL(e.name).pathname === ${JSON.stringify(view.api)}) || {}).responseEnd || NaN`,
        )) as number;
        if (i === 0) continue; // warm-up: the renderer's first launch
        totals.push(t);
        api.push(a);
      }
      const m = median(totals);
      results.push({
        name: `${view.name}: first paint with ${JOBS.toLocaleString("en")} jobs, ${RUNS.toLocaleString("en")} runs`,
        value: Math.round(m),
        unit: "ms",
        ...(view.name.includes("coloured") ? {} : { target: `< ${PAINT_TARGET_MS} ms`, ok: m < PAINT_TARGET_MS }),
        notes: `median of ${LOADS} cold loads (max ${Math.round(Math.max(...totals))} ms); ${view.api} answered at ${Math.round(median(api))} ms`,
      });
    }
  } finally {
    await browser.close();
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

export default async function webBench(): Promise<BenchSection> {
  const sizes = bundleSizes();
  const tmp = mkdtempSync(join(tmpdir(), "svc-web-bench-db-"));
  try {
    const now = Date.now();
    const file = join(tmp, "runs.db");
    const small = join(tmp, "small.db");
    const t0 = performance.now();
    seedRuns(file, RUNS, now);
    const seedS = (performance.now() - t0) / 1000;
    // The same runs a day over a history ten times shorter.
    seedRuns(small, RUNS / 10, now, DAYS / 10);
    const queries = rangeQueries(file, small, now);
    const paints = await firstPaints(file);
    return {
      title: "Dashboard",
      method:
        `Bundle: gzip (level 9) of the JS chunks of a fresh build of dist/web; the first page loads only the entry chunk. ` +
        `History: ${RUNS.toLocaleString("en")} runs of ${JOBS.toLocaleString("en")} jobs over ${DAYS} days (10,000 in any 24 h; 10 % never started), ` +
        `written with SQL into a database the store created (${round(seedS)} s). Range query: store.timeline.range in process, limit 10,000, ` +
        `${REPS} repetitions after 3 warm-ups, against the floor of reading as many rows straight off the started_at index and against the same ` +
        `window on a history ten times shorter. First paint: a real svcd (built from this tree) with those ${JOBS.toLocaleString("en")} jobs ` +
        `(groups of ten: a daily root and nine after: jobs) and that database; headless Debian chromium at 1280x900, each view loaded ` +
        `${LOADS} times from about:blank after a warm-up; the time is performance.now() when the view's content exists and a frame has been ` +
        `painted (requestAnimationFrame then a task), from navigation start, fetches included.`,
      results: [...sizes, ...queries, ...paints],
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
