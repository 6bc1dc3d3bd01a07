import { readFileSync } from "node:fs";
import { request } from "node:http";
import { Worker } from "node:worker_threads";
import { loadavg } from "node:os";
import { join } from "node:path";
import { ConfigWorker } from "../src/api/configWorker.js";
import { redactedText, validateConfigText } from "../src/api/configAccess.js";
import { preloadValidation } from "../src/api/hooks.js";
import { MAX_CONFIG_TEXT } from "../src/api/routes/config.js";
import { apiKit, type ApiKit } from "../src/api/testkit.js";
import { BUILD_DIR, ensureBuild } from "./helpers/daemon.js";
import { svcYaml } from "./helpers/projectGen.js";
import { pct, quick, sig, sleep } from "./helpers/stats.js";
import type { BenchResult, BenchSection } from "./types.js";
import { generateProject } from "./validate.bench.js";

/**
 * Config views off the event loop (issue 18 follow-up): `GET /api/config/source`
 * redacts svc.yaml in the config worker's thread. For 1,000 and 10,000 jobs:
 * the view's time, and how late a timer on the daemon's loop fires while the
 * view is computed, against an equal window with no view: a tick due at that
 * moment waits as long. Then what stayed or was on the loop at 10,000 jobs:
 * the redaction in-line (as before), validation and the reload.
 */

/** `--quick`: a smaller second size (the before/after ratio is taken at the last one). */
const SIZES = quick() ? [1_000, 4_000] : [1_000, 10_000];
/** The lateness sampler's period: a timer every 10 ms, each one's delay past its due time recorded. */
const PERIOD_MS = 10;
/** About the most jobs a text under the API's body limit holds (bench/helpers/projectGen.ts's short jobs: ~0.9 MB). */
const LIMIT_JOBS = 7_000;
/** What `${env:DB_URL}` in the generated env values resolves to; the view must not show it (it shows the reference anyway). */
const SECRET = "postgres://bench:bench-secret@localhost/bench";

/** generateProject's jobs, all manual (nothing fires while measuring); same text otherwise. */
function config(jobs: number): string {
  return generateProject(jobs)
    .replace(/^ {4}frequency: (?!after:).*$/gm, "    frequency: manual")
    .replace(/^ {4}(time|weekday|day_of_month): .*\n/gm, "");
}

/**
 * One request whose answer is only collected, not parsed: the client shares
 * this process's event loop with the API, and parsing or schema-checking a
 * 3 MB answer here (as the test kit's client does) would be counted as the
 * daemon's. A user's client is another process.
 */
function http(base: string, method: string, path: string, body?: string): Promise<{ status: number; text: () => string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const req = request(url, { method, headers: body === undefined ? {} : { "content-type": "application/json" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: () => Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Starts a timer chain; `stop()` returns each timer's lateness, ms. */
function lateness(): { stop(): number[] } {
  const samples: number[] = [];
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const arm = (due: number) => {
    timer = setTimeout(() => {
      const now = performance.now();
      samples.push(now - due);
      if (!stopped) arm(now + PERIOD_MS);
    }, PERIOD_MS);
  };
  arm(performance.now() + PERIOD_MS);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      return samples;
    },
  };
}

/**
 * Runs `f` with the sampler on: its time, the lateness samples meanwhile and
 * the main thread's CPU time over the same window (the loop's own work,
 * whatever the machine's load).
 */
async function during<T>(f: () => Promise<T> | T): Promise<{ value: T; ms: number; late: number[]; cpu: number }> {
  const l = lateness();
  await sleep(30); // a few samples first, so the window starts measured
  const c = mainThreadCpuMs();
  const t = performance.now();
  const value = await f();
  const ms = performance.now() - t;
  const cpu = mainThreadCpuMs() - c;
  // The timer due while `f` ran fires now: let it record how late it is.
  await sleep(2 * PERIOD_MS);
  return { value, ms, late: l.stop(), cpu };
}

/**
 * A thread of this process busy for `ms` doing nothing of svc's: how late
 * the loop's timers get from the machine sharing its cores alone (on 2
 * cores under other load, a busy thread takes time from the main one).
 */
function busyThread(ms: number): Promise<void> {
  const w = new Worker(`const end = Date.now() + ${Math.round(ms)}; let x = 0; while (Date.now() < end) x += Math.sqrt(x + 1);`, { eval: true });
  return new Promise((resolve, reject) => {
    w.on("exit", () => resolve());
    w.on("error", reject);
  });
}

/** CPU time of this process's main thread (the event loop), ms: what its wall time is on an idle machine. */
function mainThreadCpuMs(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
}

const onLoopCpu = during;

interface Window {
  p99: number;
  max: number;
  /** Main-thread CPU over the window, ms. */
  cpu: number;
  ms: number;
}

interface SizeResult {
  jobs: number;
  mb: number;
  firstMs: number;
  keptMs: number;
  keptCpu: number;
  view: Window;
  idle: Window;
  busy: Window;
  samples: number;
}

const windowOf = (r: { late: number[]; cpu: number; ms: number }): Window => ({ p99: pct(r.late, 99), max: Math.max(...r.late), cpu: r.cpu, ms: r.ms });

async function measureSize(kit: ApiKit, jobs: number, text: string): Promise<SizeResult> {
  // As the daemon does after it listens: ajv loaded before the first request that needs it.
  preloadValidation();
  await http(kit.base, "GET", "/api/status");
  // The first request with a query schema compiles ajv's meta-schema (~50-150 ms, once per daemon):
  // a dashboard has made such requests long before anyone opens the config.
  await http(kit.base, "GET", "/api/config/daemon");
  await sleep(1_000);
  const view = await during(() => http(kit.base, "GET", "/api/config/source"));
  const answer = view.value.text();
  if (view.value.status !== 200 || !answer.includes('\\"***\\"') || answer.includes(SECRET)) throw new Error(`view: ${view.value.status} ${answer.slice(0, 300)}`);
  const kept = await during(() => http(kit.base, "GET", "/api/config/source"));
  // The same length of time with no view, for the noise of this machine now; then with a thread busy.
  const idle = await during(() => sleep(view.ms));
  const busy = await during(() => busyThread(view.ms));
  return {
    jobs,
    mb: text.length / 1024 / 1024,
    firstMs: view.ms,
    keptMs: kept.ms,
    keptCpu: kept.cpu,
    view: windowOf(view),
    idle: windowOf(idle),
    busy: windowOf(busy),
    samples: view.late.length,
  };
}

export default async function bench(): Promise<BenchSection> {
  ensureBuild();
  // The thread as svcd runs it: the bundled one beside the bench build's svcd bundle.
  const entry = new URL(`file://${join(BUILD_DIR, "dist", "bundle", "configThread.mjs")}`).href;
  process.env.DB_URL ??= SECRET;
  const sizes: SizeResult[] = [];
  const results: BenchResult[] = [];
  for (const jobs of SIZES) {
    const text = config(jobs);
    const worker = new ConfigWorker({ entry });
    const kit = await apiKit(text, { configWorker: worker });
    try {
      const r = await measureSize(kit, jobs, text);
      sizes.push(r);
      const label = `${jobs.toLocaleString("en")} jobs`;
      results.push(
        {
          name: `GET /api/config/source, ${label}: first view`,
          value: sig(r.firstMs),
          unit: "ms",
          notes: `${r.mb.toFixed(2)} MB svc.yaml; thread start + parse + redaction; the same text again: ${sig(r.keptMs)} ms (kept; main-thread CPU ${sig(r.keptCpu)} ms: read, compare, send)`,
        },
        {
          name: `main-thread CPU during that view, ${label}`,
          value: sig(r.view.cpu),
          unit: "ms",
          target: "<= no view + 100 ms",
          ok: r.view.cpu <= r.idle.cpu + 100,
          notes: `the loop's own work while the view is computed (engine ticks, the request, the ${r.mb.toFixed(2)} MB answer); the same window with no view: ${sig(r.idle.cpu)} ms`,
        },
        {
          name: `timer lateness on the loop during that view, ${label}: p99`,
          value: sig(r.view.p99),
          unit: "ms",
          // No target: on 2 cores the loop shares the machine with the thread (and V8's GC helpers for its
          // allocations), which a loaded machine makes late whatever the loop does. What the loop itself
          // does is the CPU row above; what it gained, the before/after ratio below.
          notes:
            `max ${sig(r.view.max)} ms, ${r.samples} timers of ${PERIOD_MS} ms. Same length, no view: p99 ${sig(r.idle.p99)} / max ${sig(r.idle.max)} ms; ` +
            `a thread spinning (no allocation) instead: p99 ${sig(r.busy.p99)} / max ${sig(r.busy.max)} ms. No target: this is the machine's share of the cores, the loop's own work is the CPU row`,
        },
      );
      if (jobs === SIZES[SIZES.length - 1]) {
        // What the loop paid before: the same redaction in-line.
        const inline = await onLoopCpu(() => redactedText("svc.yaml", text));
        const beforeMax = Math.max(...inline.late);
        results.push(
          {
            name: `before: the redaction in-line, ${label}: longest timer lateness`,
            value: sig(beforeMax),
            unit: "ms",
            notes: `wall ${sig(inline.ms)} ms, main-thread CPU ${sig(inline.cpu)} ms: every tick, dispatch and request waited that long`,
          },
          {
            // Both in this run, on the same text: the machine's load weighs on both sides.
            name: `longest timer lateness during a view, ${label}: before (in-line) / after (worker)`,
            value: sig(beforeMax / r.view.max),
            unit: "ratio",
            target: ">= 10x",
            ok: beforeMax / r.view.max >= 10,
            notes: `${sig(beforeMax)} ms / ${sig(r.view.max)} ms; main-thread CPU ${sig(inline.cpu)} / ${sig(r.view.cpu)} ms = ${sig(inline.cpu / r.view.cpu)}x`,
          },
        );
        // The API takes texts up to its body limit (MAX_CONFIG_TEXT, 1,000,000 characters): the 10,000-job
        // file is refused (413) before any parse; validation is measured on the largest text it takes.
        const file = kit.configPath;
        const tooBig = await http(kit.base, "POST", "/api/config/validate", JSON.stringify({ file: "svc.yaml", content: text }));
        if (text.length > MAX_CONFIG_TEXT && tooBig.status !== 413) throw new Error(`validate of ${text.length} characters: ${tooBig.status}, expected 413`);
        const atLimit = svcYaml(LIMIT_JOBS);
        if (atLimit.length > MAX_CONFIG_TEXT) throw new Error(`${LIMIT_JOBS} jobs are ${atLimit.length} characters, over the limit`);
        const validateBig = await onLoopCpu(() => validateConfigText("svc.yaml", text, file));
        const validateOnLoop = await onLoopCpu(() => validateConfigText("svc.yaml", atLimit, file));
        const body = JSON.stringify({ file: "svc.yaml", content: atLimit });
        const validate = await during(() => http(kit.base, "POST", "/api/config/validate", body));
        if (validate.value.status !== 200 || !validate.value.text().includes('"valid":true')) throw new Error(`validate: ${validate.value.status} ${validate.value.text().slice(0, 300)}`);
        results.push(
          {
            name: `POST /api/config/validate, ${LIMIT_JOBS.toLocaleString("en")} short jobs (${(atLimit.length / 1e6).toFixed(2)} MB, near the body limit), in the worker`,
            value: sig(validate.ms),
            unit: "ms",
            notes:
              `timer lateness meanwhile p99 ${sig(pct(validate.late, 99))} ms, max ${sig(Math.max(...validate.late))} ms; ` +
              `the same validation on the loop (before): main-thread CPU ${sig(validateOnLoop.cpu)} ms (wall ${sig(validateOnLoop.ms)} ms)`,
          },
          {
            name: `validation of the ${label} text on the loop: main-thread CPU`,
            value: sig(validateBig.cpu),
            unit: "ms",
            notes: `wall ${sig(validateBig.ms)} ms; what validate/save would cost on the loop if the API took a text this large (it answers 413)`,
          },
        );
        const reload = await onLoopCpu(() => kit.deps.reload());
        results.push({
          name: `reload, ${label}: main-thread CPU (on the loop)`,
          value: sig(reload.cpu),
          unit: "ms",
          notes: `wall ${sig(reload.ms)} ms, longest timer lateness ${sig(Math.max(...reload.late))} ms: parse, check and the engine's swap (stays on the loop: docs/PERFORMANCE.md)`,
        });
      }
    } finally {
      await kit.close();
      await worker.close();
    }
  }
  return {
    title: "Config views off the event loop",
    method:
      `In-process API (src/api/testkit.ts: the real Engine, SQLite, Fastify on 127.0.0.1) over svc.yaml files from ` +
      `bench/validate.bench.ts (${SIZES.map((n) => n.toLocaleString("en")).join(" and ")} jobs, ~11 lines each, made manual so nothing fires), ` +
      `the config worker running the bundled thread (dist/bundle/configThread.mjs of the bench build). A timer chain on the ` +
      `event loop (one every ${PERIOD_MS} ms) records how late each fires: a tick due then waits as long. Measured during the ` +
      `first GET /api/config/source (thread start, parse, redaction) and over an equal window without a view (at most 10 s). ` +
      `Main-thread CPU is read from /proc/self/task/<pid>/schedstat: the wall time on an idle machine. ` +
      `The before/after ratio compares the longest lateness with the redaction run in-line on the loop (as before the worker) ` +
      `and through the worker, on the same text in the same run. ${quick() ? "Quick run (--quick: 1,000 and 4,000 jobs). " : ""}` +
      `Load average ${loadavg()[0]!.toFixed(2)} at the end.`,
    results,
  };
}
