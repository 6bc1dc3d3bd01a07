/**
 * Shared pieces of the reliability suite (docs/RELIABILITY.md): the mode
 * switch, daemons and directories that are always cleaned up, and the
 * invariant checks every fault test ends with.
 */
import { spawnSync } from "node:child_process";
import Database from "better-sqlite3";
import { existsSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { cleanup, project, startDaemon, until, type DaemonProc } from "../../helpers/daemonKit.js";

/** `SVC_RELIABILITY_FULL=1`: the long variants (50 kills, 60 s of load, 1 GB of output...). */
export const FULL = process.env.SVC_RELIABILITY_FULL === "1";

/** The default figure, or the full one. */
export const pick = <T>(quick: T, full: T): T => (FULL ? full : quick);

/** Figures a test reports; printed at the end of each file and copied into docs/RELIABILITY.md. */
export function report(what: string, figures: Record<string, unknown>): void {
  const text = Object.entries(figures)
    .map(([k, v]) => `${k}=${typeof v === "number" && !Number.isInteger(v) ? v.toFixed(1) : String(v)}`)
    .join(" ");
  process.stdout.write(`[reliability${FULL ? " full" : ""}] ${what}: ${text}\n`);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Owns what a test starts: daemons are SIGKILLed, extra cleanups run, and
 * directories are removed in `dispose` (call it from afterEach).
 */
export class Owned {
  private daemons: DaemonProc[] = [];
  private dirs: string[] = [];
  private cleanups: (() => unknown)[] = [];

  project(yaml: string, opts: Parameters<typeof project>[1] = {}): string {
    const dir = project(yaml, opts);
    this.dirs.push(dir);
    return dir;
  }

  async daemon(dir: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<DaemonProc> {
    const d = await startDaemon(dir, args, env);
    this.daemons.push(d);
    return d;
  }

  /** Registers a cleanup that runs before the daemons are killed (last registered first). */
  defer(fn: () => unknown): void {
    this.cleanups.push(fn);
  }

  dir(path: string): string {
    this.dirs.push(path);
    return path;
  }

  async dispose(): Promise<void> {
    for (const fn of this.cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch {
        // keep cleaning up
      }
    }
    for (const d of this.daemons.splice(0)) await d.stop("SIGKILL");
    for (const d of this.dirs.splice(0)) cleanup(d);
  }
}

/** Is anything of the process group `pgid` alive (zombies excluded)? */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  return groupSize(pgid) > 0; // kill(0) also succeeds for zombies waiting to be reaped
}

/** Live (non-zombie) processes whose process group is `pgid`, counted with ps. */
export function groupSize(pgid: number): number {
  const r = spawnSync("ps", ["-e", "-o", "pgid=,stat="], { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  let n = 0;
  for (const line of r.stdout.split("\n")) {
    const [g, stat] = line.trim().split(/\s+/);
    if (Number(g) === pgid && stat && !stat.startsWith("Z")) n++;
  }
  return n;
}

/** A log line a WebSocket client received (that is: acknowledged as durable). */
export interface Received {
  run: number;
  seq: number;
  line: string;
}

/** Follows a run's log stream, pushing every line frame into `into`. */
export function follow(d: { addr: string }, runId: number, into: Received[], onEnd?: (status: string) => void): WebSocket {
  const ws = new WebSocket(`ws://${d.addr}/ws/logs/${runId}`);
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data)) as { type: string; seq: number; line: string; status?: string };
    if (msg.type === "line") into.push({ run: runId, seq: msg.seq, line: msg.line });
    else if (msg.type === "end") onEnd?.(msg.status ?? "");
  });
  ws.on("error", () => {}); // the daemon may die under it: expected in fault tests
  return ws;
}

export interface DbFacts {
  runs: number;
  lines: number;
  byStatus: Record<string, number>;
}

/**
 * The checks after every fault, on the database file itself (read-only):
 * integrity_check is ok, no (job, slot) has two runs, and every line a
 * client received is stored with the same text.
 */
export function checkDatabase(dbPath: string, received: readonly Received[] = []): DbFacts {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const integrity = db.pragma("integrity_check", { simple: true });
    if (integrity !== "ok") throw new Error(`integrity_check of ${dbPath}: ${String(integrity)}`);
    const dup = db
      .prepare("SELECT job_name, scheduled_for, COUNT(*) n FROM job_runs WHERE scheduled_for IS NOT NULL GROUP BY 1, 2 HAVING n > 1")
      .all();
    if (dup.length > 0) throw new Error(`slots with more than one run: ${JSON.stringify(dup)}`);
    // run_logs has no (run_id, seq) index (spans describe it): read each run's lines once.
    const stored = new Map<number, Map<number, string>>();
    const linesOf = db.prepare("SELECT seq, line FROM run_logs WHERE run_id = ?");
    for (const run of new Set(received.map((r) => r.run))) {
      stored.set(run, new Map((linesOf.all(run) as { seq: number; line: string }[]).map((l) => [l.seq, l.line])));
    }
    for (const r of received) {
      const line = stored.get(r.run)?.get(r.seq);
      if (line !== r.line) throw new Error(`run ${r.run} seq ${r.seq} was received by a client (${JSON.stringify(r.line)}) but stored as ${JSON.stringify(line)}`);
    }
    const byStatus: Record<string, number> = {};
    for (const row of db.prepare("SELECT status, COUNT(*) n FROM job_runs GROUP BY 1").all() as { status: string; n: number }[]) {
      byStatus[row.status] = row.n;
    }
    return {
      runs: Object.values(byStatus).reduce((a, b) => a + b, 0),
      lines: db.prepare("SELECT COUNT(*) FROM run_logs").pluck().get() as number,
      byStatus,
    };
  } finally {
    db.close();
  }
}

interface RunRow {
  id: number;
  job_name: string;
  status: string;
  pid: number | null;
}

/** RUNNING runs of a live daemon whose process group is gone ("running unseen"). */
export async function runningWithoutProcess(d: DaemonProc): Promise<RunRow[]> {
  const r = await d.api<{ rows: RunRow[] }>("GET", "/api/db/job_runs?status=RUNNING&page_size=100");
  return r.body.rows.filter((row) => row.pid === null || !groupAlive(row.pid));
}

/** Waits until a (restarted) daemon has nothing RUNNING without a process and the old groups are gone. */
export async function settled(d: DaemonProc, oldGroups: readonly number[], ms = 30_000): Promise<void> {
  await until(`old process groups ${oldGroups.join(",")} gone`, () => oldGroups.every((p) => !groupAlive(p)), ms);
  await until("no run RUNNING without a live process", async () => (await runningWithoutProcess(d)).length === 0, ms);
}

/** pids of RUNNING runs (their process group ids). */
export async function runningGroups(d: DaemonProc): Promise<number[]> {
  const r = await d.api<{ rows: RunRow[] }>("GET", "/api/db/job_runs?status=RUNNING&page_size=100");
  return r.body.rows.map((x) => x.pid).filter((p): p is number => p !== null);
}

export const dbPathOf = (dir: string) => join(dir, ".svc", "svc.db");

export async function waitStatus(d: DaemonProc, runId: number, statuses: string[], ms = 30_000): Promise<{ status: string; error: string | null; attempt: number }> {
  return until(`run ${runId} to be ${statuses.join("|")}`, async () => {
    const r = await d.api<{ status: string; error: string | null; attempt: number }>("GET", `/api/runs/${runId}`);
    return r.status === 200 && statuses.includes(r.body.status) ? r.body : null;
  }, ms);
}

export { existsSync, until };
export type { DaemonProc };
