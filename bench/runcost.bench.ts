/**
 * The cost of one run (issue 24), each measured side by side with its floor
 * in the same run:
 *
 * 1. in this process, the real Engine on a SQLite file: recorded manual runs
 *    of /bin/true with 8 in flight against raw posix_spawn of /bin/true with
 *    8 in flight (svc's own posixSpawn, how svcd starts jobs on Linux), and
 *    the SQLite statements and transactions one run costs;
 * 2. end to end through the API of a real svcd: 1,000 `POST
 *    /api/jobs/t/run` from 32 HTTP clients, /bin/true, pool_size 8, until
 *    the 1,000th run is recorded SUCCESS, against 1,000 raw
 *    `child_process.spawn`s of /bin/true, 8 in flight, from a fresh Node
 *    process;
 * 3. svcd's first scheduled dispatch after startup against its later ones:
 *    fresh daemons (1,000 idle jobs, 50 jobs `every:10s`, one more alone at
 *    another second), each slot's start delays read from the stamps the jobs
 *    write.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { startDaemon, type Daemon } from "./helpers/daemon.js";
import { engineRate, engineRig, WarpClock, type Rig } from "./helpers/engineRig.js";
import { idleJobsYaml, writeTempProject } from "./helpers/projectGen.js";
import { closedLoopRate, POSIX_SPAWN, rawLoopInFreshNode, rawRun } from "./helpers/raw.js";
import { describe, median, pct, quick, round, sig, sleep, sleepUntil } from "./helpers/stats.js";
import type { BenchResult, BenchSection } from "./types.js";

const IN_FLIGHT = 8;
const TARGET_IN_PROCESS = 0.8;
const TARGET_API = 0.9;
const TARGET_FIRST = 1.2;
const TRIGGERS = 1_000;
const CLIENTS = 32;
const BURST = 50;

// ---- 1. in process ----

interface StatementCounts {
  reads: number;
  writes: number;
  /** Explicit COMMITs plus writes outside a transaction (each its own commit). */
  commits: number;
  /** Every statement (its first 90 characters) and how often it ran. */
  bySource: Map<string, number>;
}

/**
 * Counts the SQLite statements run while `fn` runs, by wrapping better-sqlite3's Statement methods (the
 * transactions' BEGIN and COMMIT are statements too).
 */
async function countStatements(fn: () => Promise<unknown>): Promise<StatementCounts> {
  const probe = new Database(":memory:");
  const proto = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, (...a: unknown[]) => unknown>;
  probe.close();
  const counts: StatementCounts = { reads: 0, writes: 0, commits: 0, bySource: new Map() };
  const methods = ["run", "get", "all", "iterate"] as const;
  const original = Object.fromEntries(methods.map((m) => [m, proto[m]!]));
  for (const m of methods) {
    proto[m] = function (this: { source: string; database: { inTransaction: boolean } }, ...args: unknown[]) {
      const verb = /^\s*(\w+)/.exec(this.source)?.[1]?.toUpperCase() ?? "";
      const key = this.source.replace(/\s+/g, " ").slice(0, 90);
      counts.bySource.set(key, (counts.bySource.get(key) ?? 0) + 1);
      if (verb === "COMMIT") counts.commits++;
      else if (verb === "SELECT" || verb === "WITH") counts.reads++;
      else if (verb === "INSERT" || verb === "UPDATE" || verb === "DELETE") {
        counts.writes++;
        if (!this.database.inTransaction) counts.commits++;
      }
      return original[m]!.apply(this, args);
    };
  }
  try {
    await fn();
  } finally {
    for (const m of methods) proto[m] = original[m]!;
  }
  return counts;
}

/** `n` manual runs of t, IN_FLIGHT at a time, to their end. */
function runsToEnd(rig: Rig, n: number): Promise<void> {
  return new Promise((resolve) => {
    let submitted = 0;
    let ended = 0;
    const submit = () => {
      submitted++;
      rig.engine.runNow("t", { triggeredBy: "bench" });
    };
    const off = rig.bus.on("run:status", ({ run }) => {
      if (run.job_name !== "t" || !["SUCCESS", "FAILED", "SKIPPED"].includes(run.status)) return;
      ended++;
      if (submitted < n) submit();
      else if (ended === n) {
        off();
        resolve();
      }
    });
    for (let i = 0; i < Math.min(IN_FLIGHT, n); i++) submit();
  });
}

/** CPU used so far, in clock ticks (100 a second): this process's (every thread) and its reaped children's (/proc/self/stat). */
function cpuTicks(): { self: number; kids: number } {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const f = stat.slice(stat.lastIndexOf(") ") + 2).split(" "); // after the command name, which may hold ") "
  return { self: Number(f[11]) + Number(f[12]), kids: Number(f[13]) + Number(f[14]) };
}

/** What the blocks measured with `cpu` used: runs and CPU ticks, summed. */
interface CpuTally {
  runs: number;
  self: number;
  kids: number;
}

/** `measure` (a rate over a block) and the CPU its runs took, added to `tally`. */
async function cpu(tally: CpuTally, measure: () => Promise<number>): Promise<number> {
  const t0 = cpuTicks();
  const w0 = performance.now();
  const rate = await measure();
  const t1 = cpuTicks();
  tally.runs += (rate * (performance.now() - w0)) / 1_000;
  tally.self += t1.self - t0.self;
  tally.kids += t1.kids - t0.kids;
  return rate;
}

/** µs of CPU a run, from a tally (10,000 µs a tick). */
const perRun = (t: CpuTally, k: "self" | "kids") => (t[k] * 10_000) / Math.max(1, t.runs);

export async function inProcess(rounds: number, blockMs: number): Promise<BenchResult[]> {
  const daemon = `executor:\n  pool_size: ${IN_FLIGHT}\nscheduler:\n  max_concurrent_jobs: 32\n`;
  const rig = await engineRig(`jobs:\n  t:\n    command: ["/bin/true"]\n    concurrency: allow\n`, daemon, new WarpClock());
  const way = POSIX_SPAWN ? "posix_spawn" : "fork";
  // The floors: posix_spawn with the event loop waiting for the kernel (every earlier round's floor),
  // and posix_spawn on a worker thread (how svcd starts jobs now), each without any recording.
  const rawSync = () => rawRun(["/bin/true"], "/", way);
  const rawAsync = () => rawRun(["/bin/true"], "/", POSIX_SPAWN ? "posix_spawn_async" : "fork");
  const m = { sync: [] as number[], async: [] as number[], trigger: [] as number[], runNow: [] as number[] };
  const r = { triggerSync: [] as number[], triggerAsync: [] as number[], runNowSync: [] as number[] };
  const cpuRaw: CpuTally = { runs: 0, self: 0, kids: 0 };
  const cpuTrigger: CpuTally = { runs: 0, self: 0, kids: 0 };
  try {
    await closedLoopRate(rawSync, IN_FLIGHT, 300);
    await closedLoopRate(rawAsync, IN_FLIGHT, 300);
    // A fresh engine's CPU per run falls for its first ~1-4 s (~1.3-1.6 ms in the first second, ~0.8-0.95
    // after: the JIT's tiers, SQLite's page cache): the target is about a running svcd, so measure after that.
    await engineRate(rig, IN_FLIGHT, 3 * blockMs, "trigger");
    await engineRate(rig, IN_FLIGHT, 300, "runNow");
    for (let q = 0; q < rounds; q++) {
      // ABCDDCBA: each measure's mean sits at the same point in time.
      const a1 = await cpu(cpuRaw, () => closedLoopRate(rawSync, IN_FLIGHT, blockMs));
      const b1 = await closedLoopRate(rawAsync, IN_FLIGHT, blockMs);
      const c1 = await cpu(cpuTrigger, () => engineRate(rig, IN_FLIGHT, blockMs, "trigger"));
      const d1 = await engineRate(rig, IN_FLIGHT, blockMs, "runNow");
      const d2 = await engineRate(rig, IN_FLIGHT, blockMs, "runNow");
      const c2 = await cpu(cpuTrigger, () => engineRate(rig, IN_FLIGHT, blockMs, "trigger"));
      const b2 = await closedLoopRate(rawAsync, IN_FLIGHT, blockMs);
      const a2 = await cpu(cpuRaw, () => closedLoopRate(rawSync, IN_FLIGHT, blockMs));
      m.sync.push(a1, a2);
      m.async.push(b1, b2);
      m.trigger.push(c1, c2);
      m.runNow.push(d1, d2);
      r.triggerSync.push((c1 + c2) / (a1 + a2));
      r.triggerAsync.push((c1 + c2) / (b1 + b2));
      r.runNowSync.push((d1 + d2) / (a1 + a2));
    }
    const n = 400;
    const c = await countStatements(() => runsToEnd(rig, n));
    if (process.env.SVC_BENCH_STATEMENTS) {
      for (const [src, k] of [...c.bySource].sort((x, y) => y[1] - x[1])) console.log(`${round(k / n, 2)}\t${src}`);
    }
    const ratio = median(r.triggerSync);
    const list = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(", ");
    // Recorded runs keep the cores busy where the raw loop waits for each exec: what a run costs in CPU bounds them.
    const cores = availableParallelism();
    const recordedUs = perRun(cpuTrigger, "self") + perRun(cpuTrigger, "kids");
    const ceiling = (cores * 1e6) / recordedUs / median(m.sync);
    return [
      { name: `raw ${way} /bin/true, ${IN_FLIGHT} in flight (in this process), the event loop waiting for each`, value: Math.round(median(m.sync)), unit: "spawns/s", notes: "svc's posixSpawn without line handling: the floor of every earlier round" },
      { name: `raw ${way} /bin/true, ${IN_FLIGHT} in flight, on a worker thread`, value: Math.round(median(m.async)), unit: "spawns/s", notes: "svc's posixSpawnAsync without line handling: how svcd starts jobs now" },
      { name: `recorded manual runs of /bin/true, ${IN_FLIGHT} in flight (engine.trigger, the API's path)`, value: Math.round(median(m.trigger)), unit: "runs/s", notes: "to SUCCESS recorded; the runs asked for in one loop turn created in one commit" },
      { name: `recorded manual runs of /bin/true, ${IN_FLIGHT} in flight (engine.runNow)`, value: Math.round(median(m.runNow)), unit: "runs/s", notes: "to SUCCESS recorded; one commit per creation" },
      {
        name: `recorded runs (trigger) / raw ${way}, ${IN_FLIGHT} in flight`,
        value: round(ratio, 2),
        unit: "ratio",
        target: `>= ${TARGET_IN_PROCESS}x`,
        ok: ratio >= TARGET_IN_PROCESS,
        notes: `per-round ratios ${list(r.triggerSync)}; runNow: ${list(r.runNowSync)}`,
      },
      {
        name: `recorded runs (trigger) / raw ${way} on a worker thread, ${IN_FLIGHT} in flight`,
        value: round(median(r.triggerAsync), 2),
        unit: "ratio",
        notes: `per-round ratios ${list(r.triggerAsync)}: the same spawn on both sides, so only svc's own work differs`,
      },
      {
        name: `CPU per run: recorded (trigger) / raw ${way} (the event loop waiting), this process and its children`,
        value: round(recordedUs / (perRun(cpuRaw, "self") + perRun(cpuRaw, "kids")), 2),
        unit: "ratio",
        notes:
          `recorded ${Math.round(perRun(cpuTrigger, "self"))} µs in this process + ${Math.round(perRun(cpuTrigger, "kids"))} µs in the child; ` +
          `raw ${Math.round(perRun(cpuRaw, "self"))} + ${Math.round(perRun(cpuRaw, "kids"))} µs (/proc/self/stat over the ratio's blocks)`,
      },
      {
        name: `recorded runs with all ${cores} cores busy at that CPU per run / raw ${way}`,
        value: round(ceiling, 2),
        unit: "ratio",
        notes: `${cores} cores / ${Math.round(recordedUs)} µs a run = ${Math.round((cores * 1e6) / recordedUs)} runs/s at most, against the raw loop's ${Math.round(median(m.sync))}/s, which idles while each exec runs: the ceiling of recorded runs (trigger) / raw ${way} (target >= ${TARGET_IN_PROCESS}x) on this machine`,
      },
      {
        name: "SQLite per run: commits",
        value: round(c.commits / n, 2),
        unit: "per run",
        notes: `${round(c.writes / n, 2)} writes (INSERT, UPDATE, DELETE) and ${round(c.reads / n, 2)} reads per run; ${n} runs by engine.runNow, ${IN_FLIGHT} in flight`,
      },
    ];
  } finally {
    await rig.close();
  }
}

// ---- 2. through the API ----

/** A JSON request on `agent`; resolves with the status. */
function post(addr: string, path: string, agent: Agent, body: unknown): Promise<number> {
  const i = addr.lastIndexOf(":");
  const data = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      { host: addr.slice(0, i), port: Number(addr.slice(i + 1)), method: "POST", path, agent, headers: { "content-type": "application/json", "content-length": String(data.length) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(data);
  });
}

/** 1,000 triggers from 32 clients; completed runs per second, from the first POST to the last run's finished_at. */
export async function apiRound(d: Daemon, agent: Agent): Promise<{ rate: number; postMs: number; errors: number }> {
  const before = (await d.get<{ total: number }>("/api/db/job_runs?job=t&status=SUCCESS&page_size=25")).body.total;
  let sent = 0;
  let errors = 0;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (sent < TRIGGERS) {
        sent++;
        if ((await post(d.addr, "/api/jobs/t/run", agent, {})) !== 202) errors++;
      }
    }),
  );
  const postMs = Date.now() - t0;
  for (;;) {
    const done = (await d.get<{ total: number }>("/api/db/job_runs?job=t&status=SUCCESS&page_size=25")).body.total - before;
    if (done >= TRIGGERS - errors) break;
    if (Date.now() - t0 > 120_000) throw new Error(`runcost: only ${done} of ${TRIGGERS} runs ended within 120 s`);
    await sleep(100);
  }
  const last = (await d.get<{ rows: Array<{ finished_at: string }> }>("/api/db/job_runs?job=t&sort=finished_at&order=desc&page_size=25")).body.rows[0]!;
  return { rate: ((TRIGGERS - errors) * 1_000) / (Date.parse(last.finished_at) - t0), postMs, errors };
}

export async function throughApi(rounds: number): Promise<BenchResult[]> {
  const dir = writeTempProject(`jobs:\n  t:\n    command: ["/bin/true"]\n    concurrency: allow\n`, `executor:\n  pool_size: ${IN_FLIGHT}\nscheduler:\n  max_concurrent_jobs: 32\nlog:\n  level: warn\n`, "svc-runcost-");
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const d = await startDaemon(dir);
  const svc: number[] = [];
  const raw: number[] = [];
  const ratios: number[] = [];
  const postMs: number[] = [];
  let errors = 0;
  try {
    await apiRound(d, agent); // warm-up: JIT, route compilation, page cache
    await rawLoopInFreshNode(TRIGGERS / 4, IN_FLIGHT, ["/bin/true"]);
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? ["svc", "raw"] : ["raw", "svc"];
      let s = NaN;
      let f = NaN;
      for (const which of order) {
        if (which === "svc") {
          const a = await apiRound(d, agent);
          s = a.rate;
          postMs.push(a.postMs);
          errors += a.errors;
        } else f = await rawLoopInFreshNode(TRIGGERS, IN_FLIGHT, ["/bin/true"]);
      }
      svc.push(s);
      raw.push(f);
      ratios.push(s / f);
    }
  } finally {
    agent.destroy();
    await d.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const ratio = median(ratios);
  return [
    { name: `raw child_process.spawn /bin/true, ${IN_FLIGHT} in flight, fresh Node process`, value: Math.round(median(raw)), unit: "spawns/s", notes: `per round ${raw.map(Math.round).join(", ")}` },
    {
      name: `API: ${TRIGGERS} triggers from ${CLIENTS} clients, completed runs/s`,
      value: Math.round(median(svc)),
      unit: "runs/s",
      notes: `per round ${svc.map(Math.round).join(", ")}; all POSTs answered after ${postMs.map(Math.round).join(", ")} ms; ${errors} answers other than 202`,
    },
    {
      name: "API runs / raw child_process.spawn",
      value: round(ratio, 2),
      unit: "ratio",
      target: `>= ${TARGET_API}x`,
      ok: ratio >= TARGET_API,
      notes: `per-round ratios ${ratios.map((x) => x.toFixed(2)).join(", ")}`,
    },
  ];
}

// ---- 3. the first scheduled dispatch after startup ----

const SLOT_S = 10;

/** Delays after the slot (ms) of the stamps `date +%s.%N` wrote, per slot file `<prefix><slot ISO>.txt`. */
function stampsBySlot(dir: string, prefix: string): Array<{ slot: number; delays: number[] }> {
  return readdirSync(dir)
    .filter((f) => f.startsWith(prefix) && f.endsWith(".txt"))
    .map((f) => {
      const slot = Date.parse(f.slice(prefix.length, -4));
      const delays = readFileSync(join(dir, f), "utf8")
        .split("\n")
        .filter((l) => /^\d+\.\d+$/.test(l))
        .map((l) => {
          const [s, ns] = l.split(".");
          return Number(s) * 1_000 + Number(ns!.slice(0, 6)) / 1_000 - slot;
        });
      return { slot, delays };
    })
    .sort((a, b) => a.slot - b.slot);
}

export async function firstDispatch(starts: number, later: number, env?: NodeJS.ProcessEnv): Promise<BenchResult[]> {
  const burstJobs = Array.from(
    { length: BURST },
    (_, i) => `  burst-${String(i).padStart(2, "0")}:\n    command: date +%s.%N >> out/burst-$SVC_SCHEDULED_AT.txt\n    frequency: "every:${SLOT_S}s"\n    concurrency: allow\n`,
  ).join("");
  const alone = `  alone:\n    command: date +%s.%N >> out/alone-$SVC_SCHEDULED_AT.txt\n    frequency: "cron:5/${SLOT_S} * * * * *"\n    concurrency: allow\n`;
  const firstP99: number[] = [];
  const laterP99: number[] = [];
  const ratios: number[] = [];
  const aloneFirst: number[] = [];
  const aloneLater: number[] = [];
  for (let k = 0; k < starts; k++) {
    const dir = writeTempProject(`defaults:\n  timezone: UTC\njobs:\n${idleJobsYaml(1_000)}${burstJobs}${alone}`, `executor:\n  pool_size: ${BURST}\nscheduler:\n  max_concurrent_jobs: 32\n`, "svc-first-");
    mkdirSync(join(dir, "out"));
    // Start 1 s after a slot: the first slot comes ~9 s after the daemon started, as a daemon's first minute would.
    await sleepUntil(Math.ceil((Date.now() + 500) / (SLOT_S * 1_000)) * SLOT_S * 1_000 + 1_000);
    const d = await startDaemon(dir, env ? { env } : {});
    const t = Date.now();
    await sleepUntil(Math.ceil(t / (SLOT_S * 1_000)) * SLOT_S * 1_000 + (later + 1) * SLOT_S * 1_000 + 2_000);
    await d.stop();
    const bursts = stampsBySlot(join(dir, "out"), "burst-").filter((b) => b.slot > t);
    const alones = stampsBySlot(join(dir, "out"), "alone-").filter((b) => b.slot > t);
    rmSync(dir, { recursive: true, force: true });
    if (bursts.length < 2 || bursts.some((b) => b.delays.length !== BURST)) {
      throw new Error(`runcost: expected ${BURST} stamps per slot, got ${bursts.map((b) => b.delays.length).join(", ")}`);
    }
    const [first, ...rest] = bursts;
    const f = pct(first!.delays, 99);
    const l = median(rest.map((b) => pct(b.delays, 99)));
    firstP99.push(f);
    laterP99.push(l);
    ratios.push(f / l);
    if (alones.length > 1) {
      aloneFirst.push(alones[0]!.delays[0]!);
      aloneLater.push(median(alones.slice(1).map((a) => a.delays[0]!)));
    }
  }
  const ratio = median(ratios);
  return [
    {
      name: `first scheduled dispatch after startup, ${BURST} jobs due at once: p99`,
      value: sig(median(firstP99)),
      unit: "ms",
      notes: `per daemon ${firstP99.map((x) => sig(x)).join(", ")} ms; later slots' p99 (median per daemon) ${laterP99.map((x) => sig(x)).join(", ")} ms`,
    },
    {
      name: "first dispatch p99 / later dispatches' p99",
      value: round(ratio, 2),
      unit: "ratio",
      target: `<= ${TARGET_FIRST}x`,
      ok: ratio <= TARGET_FIRST,
      notes: `per daemon ${ratios.map((x) => x.toFixed(2)).join(", ")} (median); ${starts} fresh daemons, ${later} later slots each`,
    },
    {
      name: "one job due alone: first dispatch after startup / later ones",
      value: round(median(aloneFirst) / median(aloneLater), 2),
      unit: "ratio",
      notes: `first ${describe(aloneFirst, " ms")}; later (median per daemon) ${describe(aloneLater, " ms")}`,
    },
  ];
}

export default async function runCostBench(): Promise<BenchSection> {
  const q = quick();
  const results: BenchResult[] = [...(await inProcess(q ? 2 : 3, q ? 600 : 1_000)), ...(await throughApi(q ? 2 : 3)), ...(await firstDispatch(q ? 2 : 10, q ? 3 : 5))];
  return {
    title: "The cost of one run",
    method:
      `In this process (the real Engine on a SQLite file in a temp directory, as the engine section): manual runs of \`/bin/true\` (argv form, concurrency allow, pool_size ${IN_FLIGHT}) kept ${IN_FLIGHT} in flight, ` +
      "through `engine.trigger` (the API's path: the runs asked for in one loop turn created in one commit) and through `engine.runNow` (one commit per creation), counted when SUCCESS is recorded, " +
      `against raw spawns of /bin/true with ${IN_FLIGHT} in flight through svc's posixSpawn (the event loop waits for the kernel: every earlier round's floor) and posixSpawnAsync (on a worker thread, how svcd starts jobs now), in ABCDDCBA rounds of 1 s blocks; ` +
      "each ratio is the median of the rounds'. SQLite statements per run: every better-sqlite3 statement counted over 400 such runs (a write outside a transaction counts as a commit). " +
      `Through the API: a real svcd (bin/svcd, pool_size ${IN_FLIGHT}, log level warn) and ${TRIGGERS} \`POST /api/jobs/t/run\` from ${CLIENTS} keep-alive clients; the rate is ${TRIGGERS} over the time from the first POST to the last run's finished_at; ` +
      `against ${TRIGGERS} \`child_process.spawn\`s of /bin/true (pipes, detached) ${IN_FLIGHT} in flight from a fresh Node process; rounds alternate, after one warm-up round each; the ratio is the median of the rounds'. ` +
      `First dispatch: fresh svcd processes with 1,000 idle jobs, ${BURST} jobs \`every:${SLOT_S}s\` and one more at second 5 (pool_size ${BURST}), each started 1 s after a slot; each job runs \`date +%s.%N >> out/<name>-$SVC_SCHEDULED_AT.txt\`, ` +
      "and the delay is the stamp minus the slot. The first slot after startup is compared with the median of the later slots' p99 in the same daemon.",
    results,
  };
}

// `tsx bench/runcost.bench.ts` prints this section alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const section = await runCostBench();
  console.log(section.title);
  for (const r of section.results) {
    console.log(`  ${r.name}: ${r.value} ${r.unit}${r.target ? ` (target ${r.target}: ${r.ok ? "ok" : "MISSED"})` : ""}  ${r.notes ?? ""}`);
  }
}
