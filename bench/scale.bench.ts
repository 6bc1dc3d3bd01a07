/**
 * Scale curves (issue 11): real svcd processes with 100, 1,000, 10,000 and
 * 50,000 jobs: startup time, idle CPU, RSS; the engine's tick cost at each
 * size; log ingestion from one job printing as fast as it can while the API
 * keeps answering. Plots go to docs/perf/scale-*.svg.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { cpuMs, memMb, ROOT, startDaemon, type Daemon } from "./helpers/daemon.js";
import { svcYaml, writeTempProject } from "./helpers/projectGen.js";
import { describe, median, pct, quick, round, sig, sleep } from "./helpers/stats.js";
import { writeChart } from "./helpers/svg.js";
import { tickCost, type TickCost } from "./helpers/tickCost.js";
import type { BenchResult, BenchSection } from "./types.js";

const SIZES = [100, 1_000, 10_000, 50_000];
const PERF_DIR = join(ROOT, "docs", "perf");
const FIREHOSE_JOB = "firehose";

interface SizeRun {
  jobs: number;
  dir: string;
  daemon: Daemon;
  readyMs: number[];
  addrMs: number[];
  /** Restart on the data directory the fresh starts left. */
  restartMs: number;
  /** Filled by the idle window. */
  idleCpuPct?: number;
  perMinute?: number[];
  rss?: number;
  peak?: number;
  rssAfterStart?: number;
  tick?: TickCost;
}

const fmtN = (n: number): string => n.toLocaleString("en-US");

async function startSize(jobs: number, reps: number, firehoseLines: number): Promise<SizeRun> {
  const extra = jobs === SIZES[0] ? `  ${FIREHOSE_JOB}:\n    command: yes | head -n ${firehoseLines}\n    frequency: manual\n` : "";
  const dir = writeTempProject(svcYaml(jobs, extra));
  const readyMs: number[] = [];
  const addrMs: number[] = [];
  let daemon: Daemon | null = null;
  for (let r = 0; r < reps; r++) {
    if (daemon) await daemon.stop();
    daemon = await startDaemon(dir); // fresh data dir each time: every job_state row is created
    readyMs.push(daemon.readyMs);
    addrMs.push(daemon.addrMs);
  }
  await daemon!.stop();
  daemon = await startDaemon(dir, { keepData: true }); // the usual case: a restart on existing data
  return { jobs, dir, daemon, readyMs, addrMs, restartMs: daemon.readyMs, rssAfterStart: memMb(daemon.pid)?.rss ?? NaN };
}

/** Idle CPU of every daemon over `ms`, sampled per `sliceMs` (per-minute figures when ms >= 60 s). */
async function idleWindow(runs: SizeRun[], ms: number, during: () => Promise<void>): Promise<void> {
  const slice = Math.min(60_000, ms);
  const start = runs.map((r) => cpuMs(r.daemon.pid)!);
  const t0 = Date.now();
  const slices: number[][] = runs.map(() => []);
  const last = start.slice();
  let lastT = t0;
  const sampler = (async () => {
    while (Date.now() - t0 < ms) {
      await sleep(Math.min(slice, ms - (Date.now() - t0)));
      const now = Date.now();
      runs.forEach((r, i) => {
        const c = cpuMs(r.daemon.pid)!;
        slices[i]!.push((100 * (c - last[i]!)) / (now - lastT));
        last[i] = c;
      });
      lastT = now;
    }
  })();
  await during();
  await sampler;
  const elapsed = Date.now() - t0;
  runs.forEach((r, i) => {
    r.idleCpuPct = (100 * (cpuMs(r.daemon.pid)! - start[i]!)) / elapsed;
    r.perMinute = slices[i];
    const m = memMb(r.daemon.pid);
    r.rss = m?.rss ?? NaN;
    r.peak = m?.peak ?? NaN;
  });
}

interface Firehose {
  lines: number;
  linesPerS: number;
  apiMs: number[];
  jobsMs: number[];
  runMs: number;
  durableMs: number;
}

/** One run of `yes | head -n N` through the daemon; GET /api/status and /api/jobs probed meanwhile. */
async function firehose(d: Daemon, lines: number): Promise<Firehose> {
  const started = await d.post<{ run_id: number }>(`/api/jobs/${FIREHOSE_JOB}/run`, { reason: "bench" });
  if (started.status !== 202) throw new Error(`firehose: POST run answered ${started.status}: ${JSON.stringify(started.body)}`);
  const id = started.body.run_id;
  const apiMs: number[] = [];
  const jobsMs: number[] = [];
  let stop = false;
  const probe = async (path: string, into: number[]) => {
    while (!stop) {
      into.push((await d.get(path)).ms);
      await sleep(20);
    }
  };
  const probes = [probe("/api/status", apiMs), probe("/api/jobs", jobsMs)];
  let run: { status: string; started_at: string | null; finished_at: string | null } | null = null;
  const deadline = Date.now() + 300_000;
  for (;;) {
    run = (await d.get<{ status: string; started_at: string | null; finished_at: string | null }>(`/api/runs/${id}`)).body;
    if (run.status === "SUCCESS" || run.status === "FAILED") break;
    if (Date.now() > deadline) throw new Error("firehose: the run did not end within 300 s");
    await sleep(200);
  }
  stop = true;
  await Promise.all(probes);
  if (run.status !== "SUCCESS") throw new Error(`firehose: run ${id} ended ${run.status}`);
  const want = lines + 1; // plus the "--- attempt 1 ---" line
  let total = 0;
  for (;;) {
    total = (await d.get<{ total: number }>(`/api/runs/${id}/logs?limit=1`)).body.total;
    if (total >= want || Date.now() > deadline) break;
    await sleep(100);
  }
  const durableAt = Date.now();
  const t0 = Date.parse(run.started_at!);
  return {
    lines: total,
    linesPerS: (lines * 1_000) / (durableAt - t0),
    apiMs,
    jobsMs,
    runMs: Date.parse(run.finished_at!) - t0,
    durableMs: durableAt - t0,
  };
}

function plots(runs: SizeRun[]): string[] {
  const xs = (f: (r: SizeRun) => number) => runs.map((r) => [r.jobs, f(r)] as [number, number]);
  const files = {
    startup: join(PERF_DIR, "scale-startup.svg"),
    rss: join(PERF_DIR, "scale-rss.svg"),
    cpu: join(PERF_DIR, "scale-idle-cpu.svg"),
    tick: join(PERF_DIR, "scale-tick.svg"),
  };
  writeChart(files.startup, {
    title: "svcd startup time",
    xLabel: "jobs in svc.yaml",
    yLabel: "ms to first API answer",
    logX: true,
    logY: true,
    series: [
      { name: "fresh (median)", points: xs((r) => median(r.readyMs)) },
      { name: "restart", points: xs((r) => r.restartMs) },
    ],
    target: { y: 1_000, label: "1 s target (10k)" },
  });
  writeChart(files.rss, {
    title: "svcd resident memory",
    xLabel: "jobs in svc.yaml",
    yLabel: "MB",
    logX: true,
    series: [
      { name: "RSS, idle", points: xs((r) => r.rss!) },
      { name: "RSS, peak", points: xs((r) => r.peak!) },
    ],
    target: { y: 120, label: "120 MB target" },
  });
  writeChart(files.cpu, {
    title: "svcd idle CPU",
    xLabel: "jobs in svc.yaml",
    yLabel: "% of one core",
    logX: true,
    series: [{ name: "idle CPU", points: xs((r) => r.idleCpuPct!) }],
    target: { y: 1, label: "1 % target (1k)" },
  });
  writeChart(files.tick, {
    title: "Engine tick, nothing due",
    xLabel: "scheduled jobs",
    yLabel: "ms",
    logX: true,
    logY: true,
    series: [
      { name: "tick p99", points: xs((r) => r.tick!.tickP99Ms) },
      { name: "tick median", points: xs((r) => r.tick!.tickMedianMs) },
    ],
  });
  return Object.values(files).map((f) => f.slice(ROOT.length + 1));
}

export default async function scaleBench(): Promise<BenchSection> {
  const q = quick();
  const firehoseLines = q ? 1_000_000 : 3_000_000;
  const idleMs = q ? 20_000 : 45_000;
  const runs: SizeRun[] = [];
  try {
    for (const jobs of SIZES) runs.push(await startSize(jobs, q || jobs >= 50_000 ? 1 : 3, firehoseLines));
    // Every daemon now sits idle; the tick costs are measured in this process meanwhile.
    await sleep(3_000);
    await idleWindow(runs, idleMs, async () => {
      for (const r of runs) r.tick = await tickCost(r.jobs);
    });
    for (const r of runs.slice(1)) await r.daemon.stop();
    const fh = await firehose(runs[0]!.daemon, firehoseLines);
    const files = plots(runs);

    const results: BenchResult[] = [];
    for (const r of runs) {
      const n = fmtN(r.jobs);
      const ready = median(r.readyMs);
      results.push(
        {
          name: `startup, ${n} jobs, fresh data dir`,
          value: Math.round(ready),
          unit: "ms",
          ...(r.jobs === 10_000 ? { target: "< 1000 ms", ok: ready < 1_000 } : {}),
          notes: `spawn to first GET /api/status answer; ${r.readyMs.length} run(s): ${r.readyMs.map((x) => Math.round(x)).join(", ")} ms; api.addr written at ${Math.round(median(r.addrMs))} ms`,
        },
        {
          name: `startup, ${n} jobs, restart`,
          value: Math.round(r.restartMs),
          unit: "ms",
          ...(r.jobs === 10_000 ? { target: "< 1000 ms", ok: r.restartMs < 1_000 } : {}),
          notes: "on the data directory of the fresh starts (job_state rows exist), one run",
        },
        {
          name: `idle CPU, ${n} jobs`,
          value: round(r.idleCpuPct!, 3),
          unit: "% core",
          ...(r.jobs === 1_000 ? { target: "< 1 %", ok: r.idleCpuPct! < 1 } : {}),
          notes: `${round(idleMs / 1_000)} s window; per ${idleMs >= 60_000 ? "minute" : `${round(idleMs / 1_000)} s`}: ${r.perMinute!.map((x) => round(x, 3)).join(", ")} %`,
        },
        {
          name: `RSS idle, ${n} jobs`,
          value: round(r.rss!, 1),
          unit: "MB",
          ...(r.jobs === 10_000 ? { target: "< 120 MB", ok: r.rss! < 120 } : r.jobs === 1_000 ? { target: "< 120 MB (issue 6)", ok: r.rss! < 120 } : {}),
          notes: `after ${round((idleMs + 3_000) / 1_000)} s idle; ${round(r.rssAfterStart!, 1)} MB right after startup; peak (VmHWM) ${round(r.peak!, 1)} MB`,
        },
        {
          name: `tick, ${n} jobs: p99`,
          value: sig(r.tick!.tickP99Ms),
          unit: "ms",
          notes: `best of 3 rounds (p99s ${r.tick!.roundP99Ms.map((x) => sig(x)).join(", ")} ms); median ${sig(r.tick!.tickMedianMs)} ms; in-process engine start (every next slot + job_state rows) ${Math.round(r.tick!.startMs)} ms, loadProject ${Math.round(r.tick!.loadMs)} ms`,
        },
      );
    }
    const apiP99 = pct(fh.apiMs, 99);
    results.push(
      {
        name: "log ingestion, one job printing as fast as it can",
        value: Math.round(fh.linesPerS),
        unit: "lines/s",
        target: ">= 100000 lines/s",
        ok: fh.linesPerS >= 100_000,
        notes: `\`yes | head -n ${fmtN(firehoseLines)}\`: ${fmtN(fh.lines)} lines durable ${round(fh.durableMs / 1_000, 1)} s after the run started (process exited after ${round(fh.runMs / 1_000, 1)} s)`,
      },
      {
        name: "GET /api/status during the burst: p99",
        value: sig(apiP99),
        unit: "ms",
        target: "< 50 ms",
        ok: apiP99 < 50,
        notes: describe(fh.apiMs, " ms"),
      },
      {
        name: "GET /api/jobs (101 jobs) during the burst: p99",
        value: sig(pct(fh.jobsMs, 99)),
        unit: "ms",
        notes: describe(fh.jobsMs, " ms"),
      },
    );
    return {
      title: "Scale: startup, idle CPU, memory, tick; log ingestion",
      method:
        `Generated svc.yaml files of ${SIZES.map(fmtN).join(", ")} jobs (daily/weekdays/weekly/monthly/manual/after: mix, 5 zones, ` +
        "tags; every wall-clock time 3-21 h away so nothing fires). Each size runs as a real svcd (`svc daemon run`, compiled by tsc) " +
        `with a fresh data directory; startup is timed ${q ? "once" : "3 times (once at 50,000)"} from spawn to the first answer of ` +
        `GET /api/status, then once more as a restart on the data directory left behind (that daemon stays up). The four daemons then sit idle together for ${idleMs / 1_000} s after a 3 s settle: CPU is user+system time ` +
        "from /proc/<pid>/stat over the window, RSS is VmRSS at its end (peak: VmHWM). The tick cost is `engine.tick()` in this process " +
        "during that window (frozen clock, nothing due). Log ingestion: a manual job `yes | head -n N` in the 100-job daemon, timed " +
        "from the run's started_at until GET /api/runs/:id/logs reports every line durable; meanwhile GET /api/status and GET /api/jobs " +
        "are each requested in a loop (20 ms pause). Database size and query time after 1,000,000 runs: see the storage section. " +
        `Plots: ${files.map((f) => `[${f.replace(/^docs\//, "")}](${f.replace(/^docs\//, "")})`).join(", ")}.`,
      results,
    };
  } finally {
    for (const r of runs) {
      await r.daemon.stop();
      rmSync(r.dir, { recursive: true, force: true });
    }
  }
}

// `tsx bench/scale.bench.ts` prints this section alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const section = await scaleBench();
  console.log(section.title);
  for (const r of section.results) {
    console.log(`  ${r.name}: ${r.value} ${r.unit}${r.target ? ` (target ${r.target}: ${r.ok ? "ok" : "MISSED"})` : ""}  ${r.notes ?? ""}`);
  }
}
