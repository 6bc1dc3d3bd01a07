/**
 * Load: 500 jobs due in the same second on a pool of 8 (the engine with a
 * FakeClock and real subprocesses; in full mode also a real svcd at the next
 * minute), then a real svcd under 200 concurrent API clients mixing reads
 * and triggers, 100 WebSocket clients on live runs, and retention pruning a
 * backlog at the same time. Nothing lost, nothing twice, no error; latency
 * percentiles are reported.
 */
import Database from "better-sqlite3";
import { Agent, request } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { silentLogger } from "../../src/shared/logger.js";
import { openStore } from "../../src/store/index.js";
import { FakeClock } from "../helpers/fakeClock.js";
import { engineKit, type Kit } from "../helpers/engineKit.js";
import { FULL, Owned, checkDatabase, dbPathOf, pick, report, sleep, until, type DaemonProc } from "./helpers/relKit.js";

const own = new Owned();
afterEach(() => own.dispose());

const JOBS = 500;
const POOL = 8;
const names = Array.from({ length: JOBS }, (_, i) => `job${String(i).padStart(3, "0")}`);
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16).replace(":", "");
const manyJobs = (time: string) =>
  `jobs:\n${names.map((n) => `  ${n}:\n    command: "echo ${n}"\n    frequency: daily\n    time: "${time}"\n    timezone: UTC\n`).join("")}`;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

describe("500 jobs due in the same second, pool of 8", () => {
  let kit: Kit | null = null;
  let dir = "";
  afterEach(async () => {
    await kit?.close({ keepDir: true });
    kit = null;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("all run once, in FIFO order, never more than 8 at a time (engine, FakeClock, real processes)", { timeout: 180_000 }, async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-load500-"));
    const clock = new FakeClock(Date.parse("2027-01-10T02:59:59.000Z"));
    kit = await engineKit(manyJobs("0300"), { clock, dir, daemon: `executor:\n  pool_size: ${POOL}\n` });
    const started: number[] = [];
    let running = 0;
    let peak = 0;
    kit.bus.on("run:status", ({ run, from }) => {
      if (run.status === "RUNNING") {
        started.push(run.id);
        peak = Math.max(peak, ++running);
      } else if (from === "RUNNING") running--;
    });
    const t = Date.now();
    clock.set(Date.parse("2027-01-10T03:00:00.000Z"));
    await kit.waitFor("500 runs to finish", () => kit!.store.runs.byStatus(["PENDING", "RUNNING", "RETRYING"]).length === 0, 150_000);
    clock.advance(30_000);
    kit.engine.testSeam().tick();
    const runs = names.flatMap((n) => kit!.runsOf(n));
    expect(runs).toHaveLength(JOBS); // none lost, none twice
    expect(runs.every((r) => r.status === "SUCCESS" && r.scheduled_for === "2027-01-10T03:00:00.000Z")).toBe(true);
    // FIFO: runs were created in name order (the planner's order) and started in id order
    expect(runs.map((r) => r.id)).toEqual([...runs.map((r) => r.id)].sort((a, b) => a - b));
    expect(started).toEqual([...started].sort((a, b) => a - b));
    expect(started).toHaveLength(JOBS);
    expect(peak).toBeLessThanOrEqual(POOL);
    expect(peak).toBe(POOL);
    report("500 jobs in one second (engine)", { jobs: JOBS, pool: POOL, peak_running: peak, seconds: (Date.now() - t) / 1000 });
  });

  it("all run once, in FIFO order, never more than 8 at a time (real svcd at the next minute)", { timeout: 300_000 }, async (ctx) => {
    ctx.skip(!FULL, "full reliability mode only (npm run test:reliability): waits for the next minute");
    const minute = Math.ceil((Date.now() + 20_000) / 60_000) * 60_000;
    const d = await own.daemon(own.project(manyJobs(hhmm(minute)), { daemon: `executor:\n  pool_size: ${POOL}\n` }));
    await sleep(Math.max(0, minute - Date.now()));
    type Row = { id: number; job_name: string; status: string; scheduled_for: string; started_at: string; finished_at: string };
    const rows = await until("500 runs finished", async () => {
      const all: Row[] = [];
      for (let page = 1; page <= 6; page++) all.push(...(await d.api<{ rows: Row[] }>("GET", `/api/db/job_runs?page_size=100&page=${page}&sort=id&order=asc`)).body.rows);
      return all.length === JOBS && all.every((r) => r.status === "SUCCESS") ? all : null;
    }, 240_000);
    expect(new Set(rows.map((r) => r.job_name)).size).toBe(JOBS);
    expect(rows.every((r) => r.scheduled_for === new Date(minute).toISOString())).toBe(true);
    const starts = rows.map((r) => Date.parse(r.started_at));
    expect(starts).toEqual([...starts].sort((a, b) => a - b)); // FIFO by id
    let peak = 0;
    for (const r of rows) {
      const at = Date.parse(r.started_at);
      peak = Math.max(peak, rows.filter((o) => Date.parse(o.started_at) <= at && Date.parse(o.finished_at) > at).length);
    }
    expect(peak).toBeLessThanOrEqual(POOL);
    const last = Math.max(...rows.map((r) => Date.parse(r.finished_at)));
    report("500 jobs in one second (svcd)", { jobs: JOBS, peak_running: peak, first_start_ms_after_minute: starts[0]! - minute, all_done_ms_after_minute: last - minute });
  });
});

/**
 * One svcd for the mixed load. It is started before the 500-job test so
 * that retention's first pass (30 s after startup) falls inside the load.
 */
describe("200 API clients, 100 WebSocket clients and retention at once", () => {
  const LOAD_MS = pick(10_000, 60_000);
  const CLIENTS = 200;
  const WAVES = pick(1, 5);
  const OLD_RUNS = pick(2_000, 10_000);
  const bench = new Owned();
  let d: DaemonProc;
  let startedAt = 0;

  beforeAll(async () => {
    const dir = bench.project(
      `jobs:
  talk:
    command: "for i in $(seq 1 150); do echo talk line $i; sleep 0.01; done"
    concurrency: allow
  quick:
    command: "echo quick"
    concurrency: allow
  old:
    command: "true"
`,
      { daemon: "storage:\n  retention:\n    max_age: 7d\n    max_runs_per_job: 100000\n" },
    );
    // A backlog for retention: old finished runs with log lines.
    const store = openStore({ path: dbPathOf(dir), busyTimeoutMs: 5_000, walAutocheckpoint: 1_000, logger: silentLogger });
    const at = new Date(Date.now() - 10 * 86_400_000).toISOString();
    store.tx(() => {
      for (let i = 0; i < OLD_RUNS; i++) {
        const run = store.runs.create({ job_name: "old", trigger: "schedule", triggered_by: "scheduler", cycle_id: `old-${i}`, tags: [], created_at: at });
        store.runs.transition(run.id, "RUNNING", { started_at: at });
        store.runs.transition(run.id, "SUCCESS", { finished_at: at });
        for (let l = 0; l < 20; l++) store.logs.append(run.id, "stdout", `old ${i} line ${l}`, at);
      }
    });
    store.close();
    startedAt = Date.now();
    d = await bench.daemon(dir);
  }, 120_000);
  afterAll(() => bench.dispose());

  it(`${CLIENTS} clients for ${LOAD_MS / 1000} s, ${WAVES * 100} WebSocket clients on live runs, retention running: no error`, { timeout: 240_000 }, async () => {
    // Retention's first pass comes 30 s after the daemon started (after startedAt). The load starts 10 s
    // before that and goes on until the prune has deleted runs, watched in the database file: the prune
    // runs during the load by construction, however slow the machine (a 10 s window centred on the
    // pass, which a loaded machine missed, used to stand for that). The one margin left is 10 s against
    // a stall of this process's own sleep, checked below: no run pruned yet when the load begins.
    const retentionDue = startedAt + 30_000;
    await sleep(Math.max(0, retentionDue - 10_000 - Date.now()));
    const t0 = Date.now();
    // The backlog's 20 lines a run were written first: ids 1..OLD_LINES. The prune deletes lines before runs.
    const OLD_LINES = OLD_RUNS * 20;
    const reader = new Database(dbPathOf(d.dir), { readonly: true, fileMustExist: true });
    const oldLines = () => reader.prepare("SELECT count(*) FROM run_logs WHERE id <= ?").pluck().get(OLD_LINES) as number;
    expect(oldLines()).toBe(OLD_LINES);
    let pruning = false;
    const watch = setInterval(() => (pruning ||= oldLines() < OLD_LINES), 100);
    const [host, port] = [d.addr.slice(0, d.addr.lastIndexOf(":")), Number(d.addr.slice(d.addr.lastIndexOf(":") + 1))];
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    const latencies: number[] = [];
    const errors: string[] = [];
    let triggered = 0;
    /** Over the clients' keep-alive agent (a fresh connection can wait out SYN retransmits on a busy box). */
    const send = (method: string, path: string): Promise<{ status: number; text: string }> =>
      new Promise((resolve, reject) => {
        const body = method === "POST" ? "{}" : undefined;
        const req = request({ host, port, method, path, agent, headers: body ? { "content-type": "application/json", "content-length": "2" } : {}, timeout: 60_000 }, (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on("error", reject);
        req.on("timeout", () => req.destroy(new Error(`${method} ${path} timed out`)));
        req.end(body);
      });
    const call = async (method: string, path: string): Promise<number> => (await send(method, path)).status;
    const reads = ["/api/status", "/api/jobs", "/api/jobs/talk?runs=20", "/api/db/job_runs?page_size=50", "/api/audit?limit=50", "/api/db/job_state", "/api/dag", "/api/tags"];

    // WebSocket waves: 20 talk runs, 5 clients each, while the load runs.
    interface Client {
      run: number;
      seqs: number[];
      lines: string[];
      end: string | null;
    }
    const clients: Client[] = [];
    const sockets: WebSocket[] = [];
    const wave = async () => {
      const ids: number[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await send("POST", "/api/jobs/talk/run");
        expect(r.status).toBe(202);
        ids.push((JSON.parse(r.text) as { run_id: number }).run_id);
      }
      for (const id of ids) {
        for (let c = 0; c < 5; c++) {
          const client: Client = { run: id, seqs: [], lines: [], end: null };
          clients.push(client);
          const ws = new WebSocket(`ws://${d.addr}/ws/logs/${id}`);
          sockets.push(ws);
          ws.on("message", (data) => {
            const m = JSON.parse(String(data)) as { type: string; seq: number; line: string; status: string };
            if (m.type === "line") {
              client.seqs.push(m.seq);
              client.lines.push(m.line);
            } else if (m.type === "end") client.end = m.status;
          });
          ws.on("error", (e) => errors.push(`ws ${id}: ${String(e)}`));
        }
      }
    };

    // Open the 200 connections first: a burst of new connections on a busy 2-core box can wait
    // out SYN retransmits (1 s, 3 s, 7 s...), which is the client's cost, not the daemon's latency.
    const warm = performance.now();
    await Promise.all(Array.from({ length: CLIENTS }, () => call("GET", "/api/status")));
    const connectMs = performance.now() - warm;
    const deadline = t0 + LOAD_MS;
    const cap = deadline + 90_000; // retention never came: stop, and the check below says so
    const loading = () => Date.now() < cap && (Date.now() < deadline || !pruning);
    const waves = (async () => {
      for (let w = 0; w < WAVES; w++) {
        await wave();
        await sleep(Math.max(0, LOAD_MS / WAVES - 1_000));
      }
    })();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        let n = c;
        while (loading()) {
          const trigger = n++ % 10 === 0;
          const path = trigger ? "/api/jobs/quick/run" : reads[n % reads.length]!;
          const t = performance.now();
          try {
            const status = await call(trigger ? "POST" : "GET", path);
            latencies.push(performance.now() - t);
            if (trigger && status === 202) triggered++;
            else if (status >= 300) errors.push(`${path}: ${status}`);
          } catch (e) {
            errors.push(`${path}: ${String(e)}`);
          }
        }
      }),
    );
    const seconds = (Date.now() - t0) / 1000;
    clearInterval(watch);
    expect(pruning, "retention deleted runs while the clients were loading the daemon").toBe(true);
    reader.close();
    await waves;
    agent.destroy();

    await until("every WebSocket client to get its end frame", () => clients.every((c) => c.end !== null), 120_000);
    sockets.forEach((s) => s.terminate());
    for (const c of clients) {
      expect(c.end).toBe("SUCCESS");
      expect(c.seqs, `run ${c.run}: every line once, in order`).toEqual(Array.from({ length: c.seqs.length }, (_, i) => i + 1));
      expect(c.seqs).toHaveLength(151);
    }
    await until("retention to finish", () => /retention: pruned \d+ runs by age/.test(d.output()), 120_000);
    expect(d.output()).toMatch(new RegExp(`retention: pruned ${OLD_RUNS} runs by age`));
    // none lost: every accepted trigger is a run, and all finish
    await until("quick runs to finish", async () => {
      const r = await d.api<{ total: number }>("GET", "/api/db/job_runs?job=quick&status=success&page_size=25");
      return r.body.total === triggered;
    }, 120_000);
    expect(errors).toEqual([]);
    latencies.sort((a, b) => a - b);
    expect(await d.stop()).toBe(0);
    const facts = checkDatabase(dbPathOf(d.dir));
    report("mixed load", {
      clients: CLIENTS,
      connect_all_ms: connectMs,
      seconds,
      requests: latencies.length,
      rps: latencies.length / seconds,
      errors: errors.length,
      triggers: triggered,
      p50_ms: percentile(latencies, 50),
      p99_ms: percentile(latencies, 99),
      max_ms: latencies.at(-1) ?? 0,
      ws_clients: clients.length,
      ws_lines: clients.reduce((a, c) => a + c.seqs.length, 0),
      retention_pruned_runs: OLD_RUNS,
      runs_after: facts.runs,
    });
  });
});
