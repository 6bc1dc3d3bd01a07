/**
 * Crash faults beyond test/e2e/fault-crash.test.ts: the daemon is SIGKILLed
 * during a log burst, a retry delay, a reload, a dispatch of many runs and
 * at minute boundaries where daily slots are due. After every kill the
 * database passes integrity_check, no slot has two runs and every line a
 * WebSocket client received is stored; after every restart nothing is
 * RUNNING without a live process and no process group of a killed run is
 * left. Default: one round per kill point (5); SVC_RELIABILITY_FULL=1: 50
 * rounds at random points. The random draws come from a printed seed;
 * SVC_SEED=<n> replays them (test/helpers/seed.ts).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import {
  FULL,
  Owned,
  checkDatabase,
  dbPathOf,
  follow,
  pick,
  report,
  runningGroups,
  settled,
  sleep,
  until,
  type DaemonProc,
  type Received,
} from "./helpers/relKit.js";
import { seeded } from "../helpers/seed.js";

const own = new Owned();
afterEach(() => own.dispose());
const rand = seeded(import.meta.filename);

const POINTS = ["burst", "retry", "reload", "dispatch", "minute"] as const;
type Point = (typeof POINTS)[number];
const ROUNDS = Number(process.env.SVC_FAULT_KILLS ?? pick(POINTS.length, 50));
/** Daily jobs due at the coming minutes: the rounds cross their slots, some while the daemon is down. */
const SLOT_JOBS = pick(3, 6);

const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16).replace(":", "");

function config(slotTimes: string[], variant: number): string {
  const slots = slotTimes
    .map((t, i) => `  slot${i}:\n    command: "echo slot ${i}"\n    frequency: daily\n    time: "${t}"\n    timezone: UTC\n    catchup: true\n    concurrency: allow\n`)
    .join("");
  return `# variant ${variant}
jobs:
  burst:
    command: "for i in $(seq 1 4000); do echo burst line $i; done; sleep 0.2"
    concurrency: allow
  flaky:
    command: "echo trying; exit 3"
    retries: 3
    retry_delay: "fixed:1500ms"
    concurrency: allow
  chain_a:
    command: "for i in $(seq 1 100); do echo a $i; done; sleep 0.3; echo n=100"
    output: {n: "regex:n=(\\\\d+)"}
    retries: 2
    retry_delay: "fixed:200ms"
    concurrency: allow
  chain_b:
    command: "echo got {{ outputs.chain_a.n }}; sleep 0.2"
    frequency: "after:chain_a"
    concurrency: allow
${slots}${variant % 2 === 1 ? `  extra:\n    command: "true"\n` : ""}`;
}

/** The first slot instant still ahead (by at least 2 s), or null. */
function nextSlotBoundary(slotAt: number[]): number | null {
  return slotAt.find((at) => at > Date.now() + 2_000) ?? null;
}

interface Round {
  point: Point;
  killAfterMs: number;
}

async function api<T>(d: DaemonProc, method: string, path: string, body?: unknown): Promise<T> {
  const r = await d.api<T>(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Drives one kill point on a running daemon; returns when it is time to SIGKILL. */
async function drive(d: DaemonProc, dir: string, round: Round, n: number, slotAt: number[], received: Received[], sockets: WebSocket[]): Promise<void> {
  const start = Date.now();
  const followRunning = async () => {
    const rows = (await api<{ rows: { id: number }[] }>(d, "GET", "/api/db/job_runs?status=RUNNING&page_size=100")).rows;
    for (const r of rows) if (!sockets.some((s) => s.url.endsWith(`/${r.id}`))) sockets.push(follow(d, r.id, received));
  };
  switch (round.point) {
    case "burst": {
      const r = await api<{ run_id: number }>(d, "POST", "/api/jobs/burst/run", { reason: `round ${n}` });
      sockets.push(follow(d, r.run_id, received));
      break;
    }
    case "retry": {
      const r = await api<{ run_id: number }>(d, "POST", "/api/jobs/flaky/run", {});
      sockets.push(follow(d, r.run_id, received));
      await until("flaky RETRYING", async () => (await api<{ status: string }>(d, "GET", `/api/runs/${r.run_id}`)).status === "RETRYING", 20_000);
      break;
    }
    case "reload": {
      await api(d, "POST", "/api/jobs/chain_a/run", {});
      writeFileSync(join(dir, "svc.yaml"), config(slotAt.map(hhmm), n));
      d.proc.kill("SIGHUP");
      break;
    }
    case "dispatch": {
      await Promise.all(Array.from({ length: 10 }, () => d.api("POST", "/api/jobs/chain_a/run", {})));
      break;
    }
    case "minute": {
      // Kill just before or after a minute boundary where a slot job fires.
      const boundary = nextSlotBoundary(slotAt);
      // Wait for the next slot boundary (slots are a minute apart).
      if (boundary === null || boundary - Date.now() > pick(75_000, 60_000)) break; // none near: kill at a random point instead
      const at = boundary + rand.int(-200, 599);
      while (Date.now() < at - 100) {
        await followRunning().catch(() => {});
        await sleep(50);
      }
      await sleep(Math.max(0, at - Date.now()));
      return;
    }
  }
  while (Date.now() - start < round.killAfterMs) {
    await followRunning().catch(() => {});
    await sleep(30);
  }
}

describe("crash faults at chosen points", () => {
  it(`survives ${ROUNDS} SIGKILLs (burst, retry delay, reload, dispatch, minute boundary) (seed ${rand.seed})`, { timeout: 120_000 + ROUNDS * 30_000 }, async () => {
    const t0 = Date.now();
    // The first slot lands after the other kill points of the default run (20-80 s from now).
    const firstSlot = Math.ceil((t0 + 20_000) / 60_000) * 60_000;
    const slotAt = Array.from({ length: SLOT_JOBS }, (_, i) => firstSlot + i * 60_000);
    const slotTimes = slotAt.map(hhmm);
    const dir = own.project(config(slotTimes, 0), { daemon: "executor:\n  kill_grace: 300ms\n" });
    const received: Received[] = [];
    const counts: Record<string, number> = {};
    let oldGroups: number[] = [];
    for (let n = 0; n < ROUNDS; n++) {
      const point: Point = FULL ? POINTS[rand.int(0, POINTS.length - 1)]! : POINTS[n % POINTS.length]!;
      counts[point] = (counts[point] ?? 0) + 1;
      const d = await own.daemon(dir);
      await settled(d, oldGroups);
      const sockets: WebSocket[] = [];
      await drive(d, dir, { point, killAfterMs: rand.int(50, 749) }, n, slotAt, received, sockets);
      oldGroups = await runningGroups(d).catch(() => oldGroups);
      await d.stop("SIGKILL");
      sockets.forEach((s) => s.terminate());
      checkDatabase(dbPathOf(dir), received);
    }

    // A last clean start: everything the kills left is reconciled and finishes.
    const d = await own.daemon(dir);
    await settled(d, oldGroups);
    await until("every run finished", async () => {
      const open = await Promise.all(["RUNNING", "PENDING", "RETRYING"].map((s) => api<{ total: number }>(d, "GET", `/api/db/job_runs?status=${s}&page_size=25`)));
      return open.every((o) => o.total === 0);
    }, 60_000);
    // Slots that passed: exactly one run each (catchup: true covers those missed while down).
    const lastPassed = Math.max(0, ...slotAt.filter((at) => at <= Date.now() + 2_000));
    await sleep(Math.max(0, lastPassed + 2_000 - Date.now())); // a slot the last round killed around is counted
    const now = Date.now();
    const passed = slotAt.map((at, i) => ({ job: `slot${i}`, at })).filter((s) => s.at + 1_500 < now);
    await until("passed slots recorded", async () => {
      for (const s of passed) {
        const runs = (await api<{ rows: { scheduled_for: string | null }[] }>(d, "GET", `/api/db/job_runs?job=${s.job}&page_size=25`)).rows;
        if (runs.filter((r) => r.scheduled_for === new Date(s.at).toISOString()).length !== 1) return false;
      }
      return true;
    }, 20_000);
    expect(await d.stop()).toBe(0);

    const facts = checkDatabase(dbPathOf(dir), received);
    const db = new Database(dbPathOf(dir), { readonly: true });
    try {
      // none twice: at most one live run of chain_b per cycle, attempts within 1 + retries
      const twice = db.prepare("SELECT cycle_id, COUNT(*) n FROM job_runs WHERE job_name = 'chain_b' AND status NOT IN ('FAILED', 'SKIPPED') GROUP BY 1 HAVING n > 1").all();
      expect(twice).toEqual([]);
      const overAttempts = db.prepare("SELECT id, job_name, attempt FROM job_runs WHERE (job_name = 'flaky' AND attempt > 4) OR (job_name = 'chain_a' AND attempt > 3)").all();
      expect(overAttempts).toEqual([]);
      // every dependency run has its upstream's SUCCESS in the same cycle
      const orphans = db.prepare(
        "SELECT b.id FROM job_runs b WHERE b.job_name = 'chain_b' AND b.status = 'SUCCESS' AND NOT EXISTS (SELECT 1 FROM job_runs a WHERE a.cycle_id = b.cycle_id AND a.job_name = 'chain_a' AND a.status = 'SUCCESS')",
      ).all();
      expect(orphans).toEqual([]);
    } finally {
      db.close();
    }
    expect(received.length).toBeGreaterThan(0);
    report("crash points", { restarts: ROUNDS + 1, ...counts, runs: facts.runs, lines: facts.lines, ws_lines_checked: received.length, slots_passed: passed.length, seconds: (Date.now() - t0) / 1000 });
  });
});
