import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import type { BenchResult, BenchSection } from "./types.js";

/**
 * The dashboard: gzipped JavaScript of the build (dist/web), and the time
 * headless Chromium takes from navigation start to the overview painted with
 * 1,000 jobs from a real daemon (fetch of /api/jobs included), median of
 * several cold page loads.
 */

const ROOT = resolve(import.meta.dirname, "..");
const WEB = join(ROOT, "dist", "web");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const JOBS = 1000;
const LOADS = 7;
const SIZE_TARGET_KB = 150;
const RENDER_TARGET_MS = 1000;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

function bundleSizes(): BenchResult[] {
  if (!existsSync(join(WEB, "index.html"))) execFileSync(process.execPath, [join(ROOT, "scripts", "build-web.mjs")], { cwd: ROOT });
  const html = readFileSync(join(WEB, "index.html"), "utf8");
  const js = readdirSync(join(WEB, "assets")).filter((f) => f.endsWith(".js"));
  const gz = (f: string) => gzipSync(readFileSync(join(WEB, "assets", f)), { level: 9 }).length / 1024;
  const total = js.reduce((n, f) => n + gz(f), 0);
  const entry = js.filter((f) => html.includes(`assets/${f}`)).reduce((n, f) => n + gz(f), 0);
  return [
    {
      name: "dashboard JS, all chunks, gzipped",
      value: Math.round(total * 10) / 10,
      unit: "KB",
      target: `< ${SIZE_TARGET_KB} KB`,
      ok: total < SIZE_TARGET_KB,
      notes: `${js.length} chunks; the graph (dagre) and chart (uPlot) views load on demand`,
    },
    {
      name: "dashboard JS loaded by the first page, gzipped",
      value: Math.round(entry * 10) / 10,
      unit: "KB",
    },
  ];
}

function bigProject(): string {
  const lines = ["defaults:", "  timezone: Europe/Berlin", "jobs:"];
  for (let i = 0; i < JOBS; i++) {
    const name = `job-${String(i).padStart(4, "0")}`;
    lines.push(`  ${name}:`, `    description: Benchmark job ${i}`, `    command: "true"`);
    if (i % 10 === 0 || i === 0) {
      lines.push(`    frequency: daily`, `    time: "${String(i % 24).padStart(2, "0")}${String(i % 60).padStart(2, "0")}"`);
    } else {
      lines.push(`    frequency: after:job-${String(i - (i % 10)).padStart(4, "0")}`);
    }
    lines.push(`    tags: [bench, group-${i % 10}]`);
  }
  return `${lines.join("\n")}\n`;
}

async function renderTimes(): Promise<BenchResult[]> {
  if (!existsSync(CHROMIUM)) {
    return [{ name: `overview render, ${JOBS} jobs`, value: Number.NaN, unit: "ms", notes: `${CHROMIUM} missing: skipped` }];
  }
  const dir = mkdtempSync(join(tmpdir(), "svc-web-bench-"));
  writeFileSync(join(dir, "svc.yaml"), bigProject());
  const svcd = process.env.SVCD_BIN ?? join(ROOT, "bin", "svcd.js");
  const proc = spawn(process.execPath, [svcd, "-c", join(dir, "svc.yaml")], { cwd: dir, stdio: "ignore" });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
  });
  try {
    const addrFile = join(dir, ".svc", "api.addr");
    const deadline = Date.now() + 30_000;
    while (!existsSync(addrFile)) {
      if (proc.exitCode !== null || Date.now() > deadline) throw new Error("svcd did not start");
      await new Promise((r) => setTimeout(r, 100));
    }
    const url = `http://${readFileSync(addrFile, "utf8").trim()}/#/`;
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // Navigation start -> the overview's rows for all jobs exist and a frame has been painted.
    const rendered = `new Promise((resolve) => {
      const check = () => document.querySelector('table.jobs[aria-rowcount="${JOBS + 1}"] tbody tr[data-row]')
        ? requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0))
        : requestAnimationFrame(check);
      check();
    })`;
    const apiDone = `performance.getEntriesByType("resource").find((e) => e.name.endsWith("/api/jobs")).responseEnd`;
    const totals: number[] = [];
    const api: number[] = [];
    for (let i = 0; i < LOADS + 1; i++) {
      await page.goto("about:blank");
      await page.goto(url);
      const t = (await page.evaluate(rendered)) as number;
      const a = (await page.evaluate(apiDone)) as number;
      if (i === 0) continue; // warm-up: first launch of the renderer
      totals.push(t);
      api.push(a);
    }
    const total = median(totals);
    return [
      {
        name: `overview painted with ${JOBS} jobs (from navigation start)`,
        value: Math.round(total),
        unit: "ms",
        target: `< ${RENDER_TARGET_MS} ms`,
        ok: total < RENDER_TARGET_MS,
        notes: `median of ${LOADS} cold loads; rows beyond the viewport are windowed`,
      },
      {
        name: "  of which GET /api/jobs answered",
        value: Math.round(median(api)),
        unit: "ms",
        notes: "time at which the jobs response ended, same loads",
      },
    ];
  } finally {
    await browser.close();
    proc.kill("SIGTERM");
    if (proc.exitCode === null) await once(proc, "exit");
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function webBench(): Promise<BenchSection> {
  return {
    title: "Dashboard",
    method:
      `Gzip (level 9) of every JS chunk in dist/web/assets. Render: a real svcd with ${JOBS} jobs in svc.yaml, ` +
      `headless Debian chromium loading the overview ${LOADS} times after one warm-up; each load starts from about:blank.`,
    results: [...bundleSizes(), ...(await renderTimes())],
  };
}
