/**
 * Resource faults against a real svcd: a full filesystem under the
 * database, a write lock held by another process past busy_timeout, the
 * data directory removed, file descriptors exhausted, a job that forks
 * 1,000 children and a job that writes 100 MB (1 GB in full mode) to
 * stdout. Each: the daemon reports a clear error, keeps serving, recovers
 * when the fault ends and loses no acknowledged data.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { Agent } from "node:http";
import type { Socket } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SVCD, httpJson, type DaemonProc } from "../helpers/daemonKit.js";
import {
  FULL,
  Owned,
  checkDatabase,
  dbPathOf,
  follow,
  groupSize,
  pick,
  report,
  runningWithoutProcess,
  sleep,
  until,
  waitStatus,
  type Received,
} from "./helpers/relKit.js";

const own = new Owned();
afterEach(() => own.dispose());

/** Mounts a tmpfs of `size` (made by the test; we run as root in CI), or returns why it cannot. */
function tmpfs(size: string, owned = true): { dir: string } | { skip: string } {
  const dir = mkdtempSync(join(tmpdir(), "svc-tmpfs-"));
  const r = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir], { encoding: "utf8" });
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `cannot mount a tmpfs (${(r.stderr || r.error?.message || "").trim()}): needs root or CAP_SYS_ADMIN` };
  }
  if (owned) {
    own.defer(() => {
      spawnSync("umount", ["-l", dir]);
      rmSync(dir, { recursive: true, force: true });
    });
  }
  return { dir };
}

const canMount = (() => {
  const probe = tmpfs("1m", false);
  if ("skip" in probe) return probe.skip;
  spawnSync("umount", ["-l", probe.dir]);
  rmSync(probe.dir, { recursive: true, force: true });
  return null;
})();

async function trigger(d: DaemonProc, job: string): Promise<number> {
  const r = await d.api<{ run_id: number }>("POST", `/api/jobs/${job}/run`, {});
  if (r.status !== 202) throw new Error(`trigger ${job}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.run_id;
}

async function statusLatency(d: DaemonProc): Promise<number> {
  const t = Date.now();
  const r = await d.api("GET", "/api/status");
  expect(r.status).toBe(200);
  return Date.now() - t;
}

describe("a full filesystem under the database", () => {
  it("reports it, keeps serving, and loses nothing once space is back", { timeout: 180_000 }, async (ctx) => {
    ctx.skip(canMount !== null, canMount ?? "");
    const mnt = tmpfs("3m");
    if ("skip" in mnt) throw new Error(mnt.skip);
    const LINES = 60_000;
    const dir = own.project(
      `jobs:\n  spew:\n    command: "for i in $(seq 1 ${LINES}); do echo spew line $i with some padding to fill pages; done"\n  quick:\n    command: "echo quick"\n    concurrency: allow\n`,
      { daemon: `storage:\n  sqlite:\n    path: ${mnt.dir}/svc.db\n` },
    );
    const d = await own.daemon(dir);
    const received: Received[] = [];
    let ended = "";
    const spew = await trigger(d, "spew");
    follow(d, spew, received, (s) => (ended = s));
    await until("the daemon to report the full disk", () => /database or disk is full/.test(d.output()), 60_000);
    // A write may still find a free page; when it does not, the answer says why.
    const duringFault = await d.api<{ error: { message: string } }>("POST", "/api/jobs/quick/run", {});
    if (duringFault.status !== 202) {
      expect(duringFault.status).toBe(500);
      expect(duringFault.body.error.message).toMatch(/disk.*full/i);
    }
    await statusLatency(d); // reads keep working

    execFileSync("mount", ["-o", "remount,size=256m", mnt.dir]);
    const done = await waitStatus(d, spew, ["SUCCESS", "FAILED"], 60_000);
    expect(done.status).toBe("SUCCESS");
    await until("the WebSocket client to get the end frame", () => ended === "SUCCESS", 30_000);
    const quick = await trigger(d, "quick");
    expect((await waitStatus(d, quick, ["SUCCESS", "FAILED"])).status).toBe("SUCCESS");
    expect(await runningWithoutProcess(d)).toEqual([]);
    const logs = await d.api<{ total: number }>("GET", `/api/runs/${spew}/logs?limit=1`);
    expect(logs.body.total).toBe(LINES + 1); // every line, after "--- attempt 1 ---"
    expect(await d.stop()).toBe(0);
    const facts = checkDatabase(join(mnt.dir, "svc.db"), received);
    report("disk full", { lines_written: LINES, ws_lines_acknowledged: received.length, stored_lines: facts.lines, runs: facts.runs });
  });
});

describe("another process holding the write lock past busy_timeout", () => {
  it("reports it, keeps serving reads, and records every run once the lock is gone", { timeout: 120_000 }, async () => {
    const dir = own.project(
      `jobs:\n  slow:\n    command: "sleep 0.6; echo slow done"\n  queued:\n    command: "echo queued done"\n  quick:\n    command: "echo quick"\n`,
      { daemon: "storage:\n  sqlite:\n    busy_timeout: 300ms\nexecutor:\n  pool_size: 1\n" },
    );
    const d = await own.daemon(dir);
    const slow = await trigger(d, "slow");
    await waitStatus(d, slow, ["RUNNING"]);
    const queued = await trigger(d, "queued"); // waits for the one pool slot: it starts while the lock is held
    const holder = new Database(dbPathOf(dir));
    own.defer(() => holder.open && holder.close());
    holder.exec("BEGIN IMMEDIATE");
    const t = Date.now();
    const blocked = await d.api<{ error: { message: string } }>("POST", "/api/jobs/quick/run", {});
    expect(blocked.status).toBe(500);
    expect(blocked.body.error.message).toMatch(/locked/);
    await statusLatency(d);
    await sleep(Math.max(0, 2_500 - (Date.now() - t))); // well past busy_timeout, past the end of `slow`
    holder.exec("COMMIT");
    holder.close();

    expect((await waitStatus(d, slow, ["SUCCESS", "FAILED"])).status).toBe("SUCCESS");
    expect((await waitStatus(d, queued, ["SUCCESS", "FAILED"])).status).toBe("SUCCESS");
    // The store writes buffered lines again every second: they may land just after the status.
    const lines = await until("queued's lines", async () => {
      const r = await d.api<{ lines: { line: string }[] }>("GET", `/api/runs/${queued}/logs`);
      return r.body.lines.length >= 2 ? r.body.lines.map((l) => l.line) : null;
    });
    expect(lines).toEqual(["--- attempt 1 ---", "queued done"]);
    const quick = await trigger(d, "quick");
    expect((await waitStatus(d, quick, ["SUCCESS", "FAILED"])).status).toBe("SUCCESS");
    expect(await runningWithoutProcess(d)).toEqual([]);
    expect(d.output()).toMatch(/database is locked/);
    // the store's own retries are reported through the daemon's log (format, level, file), not bare stderr
    expect(d.output()).toMatch(/ERROR: writing log lines failed/);
    expect(await d.stop()).toBe(0);
    checkDatabase(dbPathOf(dir));
  });
});

describe("the data directory removed under a running daemon", () => {
  it("is noticed, put back with everything recorded so far, and the daemon keeps serving", { timeout: 120_000 }, async () => {
    const dir = own.project(`jobs:\n  tick:\n    command: "for i in $(seq 1 30); do echo tick $i; sleep 0.05; done"\n    concurrency: allow\n`);
    const d = await own.daemon(dir);
    const received: Received[] = [];
    const before = await trigger(d, "tick");
    follow(d, before, received);
    await sleep(400);
    rmSync(join(dir, ".svc"), { recursive: true, force: true });
    await until("the daemon to report the removal", () => /data directory .* was removed|was removed/.test(d.output()), 30_000);
    await until("the data directory back", () => existsSync(join(dir, ".svc", "svc.db")) && existsSync(join(dir, ".svc", "api.addr")), 60_000);
    // The daemon may have restarted its API: read the address again.
    const addr = readFileSync(join(dir, ".svc", "api.addr"), "utf8").trim();
    const i = addr.lastIndexOf(":");
    const at = { host: addr.slice(0, i), port: Number(addr.slice(i + 1)) };
    await until("the API to answer", async () => (await httpJson(at, "GET", "/api/status").catch(() => ({ status: 0 }))).status === 200, 30_000);
    const after = await httpJson<{ run_id: number }>(at, "POST", "/api/jobs/tick/run", {});
    expect(after.status).toBe(202);
    await until("both runs finished", async () => {
      const runs = await httpJson<{ rows: { id: number; status: string }[] }>(at, "GET", "/api/db/job_runs?page_size=100");
      return runs.body.rows.length === 2 && runs.body.rows.every((r) => r.status === "SUCCESS");
    }, 60_000);
    expect(existsSync(join(dir, ".svc", "svcd.pid"))).toBe(true);
    expect(statSync(join(dir, ".svc")).mode & 0o777).toBe(0o700);
    expect(await d.stop()).toBe(0);
    const facts = checkDatabase(dbPathOf(dir), received);
    expect(facts.runs).toBe(2);
    expect(facts.lines).toBe(2 * 31);
  });
});

describe("file descriptors exhausted", () => {
  it("fails what it cannot start with a clear error, keeps serving, and runs again once descriptors are free", { timeout: 120_000 }, async () => {
    const LIMIT = 64;
    const dir = own.project(`jobs:\n  work:\n    command: "sleep 0.3; echo done"\n    concurrency: allow\n`);
    const proc = spawn("prlimit", [`--nofile=${LIMIT}:${LIMIT}`, process.execPath, SVCD, "-c", join(dir, "svc.yaml")], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    proc.stdout!.on("data", (c: Buffer) => (out += c.toString()));
    proc.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    own.defer(() => proc.kill("SIGKILL"));
    const addrFile = join(dir, ".svc", "api.addr");
    await until(`svcd under prlimit to start (${out})`, () => existsSync(addrFile) && readFileSync(addrFile, "utf8").trim() !== "");
    const addr = readFileSync(addrFile, "utf8").trim();
    const port = Number(addr.slice(addr.lastIndexOf(":") + 1));
    // One kept-alive connection, opened before the fault: the way in while the daemon can accept no other.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    own.defer(() => agent.destroy());
    const via = { host: addr.slice(0, addr.lastIndexOf(":")), port, agent };
    expect((await httpJson(via, "GET", "/api/status")).status).toBe(200);
    // Descriptors below the limit: the numbers it bounds (an fd inherited above it, as some shells pass, does not count).
    const fds = () => readdirSync(`/proc/${proc.pid}/fd`).filter((n) => Number(n) < LIMIT).length;
    const before = fds();

    // Exhaust: idle connections, one at a time, until the daemon holds every descriptor it may.
    const { connect } = await import("node:net");
    const idle: Socket[] = [];
    own.defer(() => idle.forEach((s) => s.destroy()));
    while (fds() < LIMIT && idle.length < 2 * LIMIT) {
      const held = fds();
      const s = connect(port, via.host).on("error", () => {});
      idle.push(s);
      await until("the daemon to accept or drop the connection", () => fds() > held || s.closed);
    }
    const peak = fds();
    expect(peak).toBe(LIMIT);
    // A new connection now finds no descriptor: the daemon drops it unanswered.
    const fresh = await httpJson({ host: via.host, port }, "GET", "/api/status").then((r) => r.status, () => 0);
    expect(fresh).toBe(0);

    // Runs triggered now are accepted (no descriptor needed) and fail to start, saying why.
    type Run = { status: string; error: string | null };
    const refusedIds: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await httpJson<{ run_id: number }>(via, "POST", "/api/jobs/work/run", {});
      expect(r.status).toBe(202);
      refusedIds.push(r.body.run_id);
    }
    const refused = await Promise.all(refusedIds.map((id) => until(`run ${id} to end`, async () => {
      const r = (await httpJson<Run>(via, "GET", `/api/runs/${id}`)).body;
      return ["SUCCESS", "FAILED"].includes(r.status) ? r : null;
    })));
    expect(refused.map((r) => [r.status, r.error])).toEqual(refusedIds.map(() => [
      "FAILED",
      `cannot start the job's command (/bin/sh -c): svcd has no file descriptors left (EMFILE): raise its limit (ulimit -n, systemd LimitNOFILE=)`,
    ]));
    expect(fds()).toBe(LIMIT); // the fault lasted through every refused start
    expect((await httpJson(via, "GET", "/api/status")).status).toBe(200); // and the daemon kept serving

    // The fault ends once the daemon has closed the idle connections' sockets.
    idle.forEach((s) => s.destroy());
    await until("descriptors to be free again", () => fds() <= before + 2, 30_000);
    const again = await httpJson<{ run_id: number }>({ host: via.host, port }, "POST", "/api/jobs/work/run", {});
    expect(again.status).toBe(202);
    const after = await until("a run after the fault to end", async () => {
      const r = (await httpJson<Run>(via, "GET", `/api/runs/${again.body.run_id}`)).body;
      return ["SUCCESS", "FAILED"].includes(r.status) ? r : null;
    }, 30_000);
    expect([after.status, after.error]).toEqual(["SUCCESS", null]);
    agent.destroy();
    proc.kill("SIGTERM");
    await new Promise((r) => proc.once("exit", r));
    const facts = checkDatabase(dbPathOf(dir));
    expect(facts.runs).toBe(refusedIds.length + 1);
    report(`fd exhaustion (nofile=${LIMIT})`, { fds_before: before, idle_connections: idle.length, peak_fds: peak, failed_runs: refused.length, runs: facts.runs });
  });
});

describe("a job that forks 1,000 children", () => {
  const forky = `jobs:\n  forky:\n    command: "for i in $(seq 1 1000); do sleep 120 & done; echo forked; wait"\n    timeout: 60s\n  after:\n    command: "echo fine"\n`;

  it("is cancelled whole (all 1,001 processes), and the daemon stays responsive", { timeout: 120_000 }, async () => {
    const d = await own.daemon(own.project(forky, { daemon: "executor:\n  kill_grace: 1s\n" }));
    const id = await trigger(d, "forky");
    await waitStatus(d, id, ["RUNNING"]);
    const pid = (await d.api<{ pid: number }>("GET", `/api/runs/${id}`)).body.pid;
    await until("1,000 children", () => groupSize(pid) > 1_000, 60_000);
    const latency = await statusLatency(d);
    expect((await d.api("POST", "/api/jobs/forky/cancel", {})).status).toBe(200);
    const end = await waitStatus(d, id, ["FAILED"]);
    expect(end.error).toBe("cancelled");
    await until("the whole group gone", () => groupSize(pid) === 0, 30_000);
    const next = await trigger(d, "after");
    expect((await waitStatus(d, next, ["SUCCESS", "FAILED"])).status).toBe("SUCCESS");
    report("fork 1000 + cancel", { processes: 1_001, status_latency_ms: latency });
  });

  it("is killed whole by the next daemon after a SIGKILL of svcd", { timeout: 120_000 }, async () => {
    const dir = own.project(forky, { daemon: "executor:\n  kill_grace: 1s\n" });
    const d = await own.daemon(dir);
    const id = await trigger(d, "forky");
    await waitStatus(d, id, ["RUNNING"]);
    const pid = (await d.api<{ pid: number }>("GET", `/api/runs/${id}`)).body.pid;
    await until("1,000 children", () => groupSize(pid) > 1_000, 60_000);
    await d.stop("SIGKILL");
    const again = await own.daemon(dir);
    const end = await waitStatus(again, id, ["FAILED"]);
    expect(end.error).toBe("daemon restarted, process lost");
    await until("the whole group gone", () => groupSize(pid) === 0, 30_000);
  });
});

describe("a job that floods stdout", () => {
  const MB = pick(100, 1_000);
  const BYTES = MB * 1_000_000;
  /** Output without a newline, cut into 64 KiB lines: slower per byte (every piece is a full-size row). */
  const NOLINE_BYTES = pick(20, 100) * 1_000_000;
  const LINE = "0123456789".repeat(10); // 100 bytes + newline

  it(`stores all ${MB} MB as lines, and ${NOLINE_BYTES / 1e6} MB without a newline in 64 KiB pieces, with bounded memory`, { timeout: pick(240_000, 1_800_000) }, async () => {
    const dir = own.project(`jobs:\n  lines:\n    command: "yes ${LINE} | head -c ${BYTES}"\n  noline:\n    command: "head -c ${NOLINE_BYTES} /dev/zero"\n`);
    const d = await own.daemon(dir);
    const figures: Record<string, number> = {};
    for (const [job, bytes, expected] of [
      ["lines", BYTES, Math.ceil(BYTES / (LINE.length + 1))],
      ["noline", NOLINE_BYTES, Math.ceil(NOLINE_BYTES / 65_536)],
    ] as const) {
      const t = Date.now();
      const id = await trigger(d, job);
      let maxRssMb = 0;
      let maxLatency = 0;
      await until(`${job} to finish`, async () => {
        maxLatency = Math.max(maxLatency, await statusLatency(d));
        const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${d.proc.pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
        maxRssMb = Math.max(maxRssMb, rss);
        const r = await d.api<{ status: string }>("GET", `/api/runs/${id}`);
        return ["SUCCESS", "FAILED"].includes(r.body.status) ? r.body : null;
      }, pick(200_000, 1_700_000));
      expect((await d.api<{ status: string }>("GET", `/api/runs/${id}`)).body.status).toBe("SUCCESS");
      const logs = await d.api<{ total: number }>("GET", `/api/runs/${id}/logs?limit=1`);
      expect(logs.body.total).toBe(expected + 1);
      expect(maxRssMb).toBeLessThan(FULL ? 1_024 : 600);
      Object.assign(figures, { [`${job}_mb`]: bytes / 1e6, [`${job}_lines`]: expected, [`${job}_s`]: (Date.now() - t) / 1000, [`${job}_rss_mb`]: maxRssMb, [`${job}_max_status_ms`]: maxLatency });
    }
    expect(await d.stop()).toBe(0);
    report("stdout flood", { ...figures, db_mb: statSync(dbPathOf(dir)).size / 1e6 });
  });
});
