import Database from "better-sqlite3";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { cleanup, project, startDaemon, until, type DaemonProc } from "../helpers/daemonKit.js";
import { seeded } from "../helpers/seed.js";

/**
 * SIGKILL the daemon at random moments while a chain of jobs runs and logs
 * (issue 5 "fault test"; issue 12 runs the long version). After every kill:
 * the database passes integrity_check, and every log line a WebSocket client
 * received is in it. After every restart: no run is RUNNING without a live
 * process, nothing of a killed run's process group is left, and no slot has
 * two runs.
 */
const KILLS = Number(process.env.SVC_FAULT_KILLS ?? 20);
/** When each kill comes: printed, and replayed with SVC_SEED. */
const rand = seeded(import.meta.filename);

const yaml = `
jobs:
  produce:
    command: "for i in $(seq 1 400); do echo produced $i; sleep 0.005; done; echo n=400"
    output: {n: "regex:n=(\\\\d+)"}
    retries: 3
    retry_delay: "fixed:100ms"
    concurrency: allow
  consume:
    command: "for i in $(seq 1 {{ outputs.produce.n }}); do echo consumed $i; done; sleep 0.3"
    frequency: "after:produce"
    retries: 3
    retry_delay: "fixed:100ms"
    concurrency: allow
  tick:
    command: "echo tock"
    frequency: hourly
    catchup: true
`;

interface Received {
  run: number;
  seq: number;
  line: string;
}

function follow(d: DaemonProc, runId: number, into: Received[]): WebSocket {
  const ws = new WebSocket(`ws://${d.addr}/ws/logs/${runId}`);
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data)) as { type: string; seq: number; line: string };
    if (msg.type === "line") into.push({ run: runId, seq: msg.seq, line: msg.line });
  });
  ws.on("error", () => {}); // the daemon dies under it: expected
  return ws;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

const dir = project(yaml, { daemon: "executor:\n  kill_grace: 300ms\n" });
afterAll(() => cleanup(dir));

describe("crash faults", () => {
  it(`survives ${KILLS} SIGKILLs during a running chain with nothing acknowledged lost (seed ${rand.seed})`, { timeout: 60_000 + KILLS * 6_000 }, async () => {
    const received: Received[] = [];
    let runsSeen = 0;
    let previousPids: number[] = [];
    for (let i = 0; i < KILLS; i++) {
      const d = await startDaemon(dir);
      // after the restart: nothing of the killed daemon's runs may still run
      await until("old groups gone", () => previousPids.every((p) => !groupAlive(p)), 10_000);
      const stuck = await d.api<{ rows: { id: number; pid: number | null }[] }>("GET", "/api/db/job_runs?status=RUNNING&page_size=100");
      for (const r of stuck.body.rows) expect(r.pid !== null && groupAlive(r.pid), `run ${r.id} RUNNING without a process`).toBe(true);

      const started = await d.api<{ run_id: number }>("POST", "/api/jobs/produce/run", { reason: `round ${i}` });
      expect(started.status).toBe(202);
      const sockets = [follow(d, started.body.run_id, received)];
      const t0 = Date.now();
      const killAfter = rand.int(150, 1_649);
      while (Date.now() - t0 < killAfter) {
        const runs = await d.api<{ rows: { id: number }[] }>("GET", "/api/db/job_runs?job=consume&status=RUNNING&page_size=100");
        for (const r of runs.body.rows) if (!sockets.some((s) => s.url.endsWith(`/${r.id}`))) sockets.push(follow(d, r.id, received));
        await new Promise((r) => setTimeout(r, 40));
      }
      const running = await d.api<{ rows: { pid: number | null }[] }>("GET", "/api/db/job_runs?status=RUNNING&page_size=100");
      previousPids = running.body.rows.map((r) => r.pid).filter((p): p is number => p !== null);
      await d.stop("SIGKILL");
      sockets.forEach((s) => s.terminate());

      const db = new Database(join(dir, ".svc", "svc.db"), { readonly: true, fileMustExist: true });
      try {
        expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
        const get = db.prepare("SELECT line FROM run_logs WHERE run_id = ? AND seq = ?");
        for (const r of received) {
          const row = get.get(r.run, r.seq) as { line: string } | undefined;
          expect(row?.line, `run ${r.run} seq ${r.seq} received by a client but not stored`).toBe(r.line);
        }
        const dup = db.prepare("SELECT job_name, scheduled_for, COUNT(*) n FROM job_runs WHERE scheduled_for IS NOT NULL GROUP BY 1, 2 HAVING n > 1").all();
        expect(dup).toEqual([]);
        runsSeen = (db.prepare("SELECT COUNT(*) n FROM job_runs").get() as { n: number }).n;
      } finally {
        db.close();
      }
    }
    // a last clean start reconciles everything the last kill left
    const d = await startDaemon(dir);
    await until("old groups gone", () => previousPids.every((p) => !groupAlive(p)), 10_000);
    await until("no run left RUNNING or PENDING", async () => {
      const r = await d.api<{ total: number }>("GET", "/api/db/job_runs?status=RUNNING&page_size=25");
      const p = await d.api<{ total: number }>("GET", "/api/db/job_runs?status=PENDING&page_size=25");
      return r.body.total === 0 && p.body.total === 0;
    }, 30_000);
    expect(await d.stop()).toBe(0);
    expect(received.length).toBeGreaterThan(KILLS * 5);
    expect(runsSeen).toBeGreaterThanOrEqual(KILLS);
  });
});
