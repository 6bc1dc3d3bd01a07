/**
 * `svc backup` and `svc restore` through the built binaries (CONTRACT §7.4):
 * a backup taken while a job writes 100,000 log lines opens with
 * integrity_check ok and holds every run that had ended before it began;
 * restore refuses while a daemon runs, refuses a newer schema and a file
 * that is not an svc database, and keeps the old database.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, project, startDaemon, until, type DaemonProc } from "../helpers/daemonKit.js";
import { runSvc } from "./helpers/cli.js";

const BURST_LINES = 100_000;
// 100,000 lines, pausing 50 ms every 5,000: the burst lasts over a second, so the backup lands inside it.
const BURST = `perl -e '$|=1; for my $i (1..${BURST_LINES}) { print "burst line $i of a job that logs a lot\\n"; select(undef, undef, undef, 0.05) if $i % 5000 == 0 }'`;

const yaml = `
jobs:
  quick:
    command: "echo quick; echo done >&2"
  burst:
    command: |
      ${BURST}
`;

interface RunRow {
  id: number;
  job_name: string;
  status: string;
  finished_at: string | null;
}

function openCopy(file: string): Database.Database {
  return new Database(file, { readonly: true, fileMustExist: true });
}

describe("svc backup while jobs run and log", () => {
  let dir: string;
  let d: DaemonProc;

  beforeAll(async () => {
    // No automatic checkpoints: everything written stays in the -wal file, so a copy that is not
    // taken through SQLite (a plain file copy of svc.db) would miss it, and this test would see that.
    dir = project(yaml, { daemon: "storage:\n  sqlite:\n    wal_autocheckpoint: 0\n" });
    d = await startDaemon(dir);
  });
  afterAll(async () => {
    await d?.stop();
    cleanup(dir);
  });

  it("copies a consistent database during a 100,000-line log burst, holding every run that ended before it began", async () => {
    const svc = (args: string[]) => runSvc(args, { cwd: dir, timeoutMs: 60_000 });
    for (let i = 0; i < 5; i++) expect((await svc(["run", "quick", "--wait"])).code).toBe(0);
    const burst = await d.api<{ run_id: number }>("POST", "/api/jobs/burst/run");
    const burstId = burst.body.run_id;
    await until("the burst to be under way", async () => {
      const r = await d.api<{ total: number }>("GET", `/api/runs/${burstId}/logs?limit=1`);
      return r.body.total > 2_000;
    });

    const ended = (await d.api<{ runs: RunRow[] }>("GET", "/api/audit?limit=1000")).body.runs.filter((r) => r.finished_at !== null);
    expect(ended.length).toBeGreaterThanOrEqual(5);
    const file = join(dir, "backups", "svc-copy.db");
    mkdirSync(join(dir, "backups"));
    const out = await svc(["backup", file, "--json"]);
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    const answer = JSON.parse(out.stdout) as { path: string; integrity: string; runs: number; bytes: number };
    expect(answer).toMatchObject({ path: file, integrity: "ok" });

    const live = (await d.api<{ status: string }>("GET", `/api/runs/${burstId}`)).body;
    expect(live.status).toBe("RUNNING"); // the backup was taken inside the burst

    const copy = openCopy(file);
    try {
      expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
      for (const r of ended) {
        const row = copy.prepare("SELECT status, finished_at FROM job_runs WHERE id = ?").get(r.id);
        expect(row, `run ${r.id}`).toEqual({ status: r.status, finished_at: r.finished_at });
        const lines = copy.prepare("SELECT count(*) FROM run_logs WHERE run_id = ?").pluck().get(r.id);
        expect(lines, `log lines of run ${r.id}`).toBe(3); // --- attempt 1 ---, quick, done
      }
      // The burst's lines in the copy are one consistent prefix: seq 1..n without a gap.
      const seqs = copy.prepare("SELECT min(seq) AS lo, max(seq) AS hi, count(*) AS n FROM run_logs WHERE run_id = ?").get(burstId) as { lo: number; hi: number; n: number };
      expect(seqs.lo).toBe(1);
      expect(seqs.n).toBe(seqs.hi);
      expect(seqs.n).toBeGreaterThan(2_000);
      expect(seqs.n).toBeLessThan(BURST_LINES + 1);
      expect(copy.prepare("SELECT count(*) FROM job_runs").pluck().get()).toBe(answer.runs);
    } finally {
      copy.close();
    }
    expect(readdirSync(join(dir, "backups"))).toEqual(["svc-copy.db"]); // no partial file left behind
    expect(readFileSync(file).length).toBe(answer.bytes);

    // The burst goes on to its end, every line recorded.
    const done = await until("the burst to end", async () => {
      const r = (await d.api<{ status: string }>("GET", `/api/runs/${burstId}`)).body;
      return r.status === "SUCCESS" ? r : null;
    }, 60_000);
    expect(done.status).toBe("SUCCESS");
    const total = (await d.api<{ total: number }>("GET", `/api/runs/${burstId}/logs?limit=1`)).body.total;
    expect(total).toBe(BURST_LINES + 1);
  }, 120_000);
});

describe("svc restore", () => {
  let dir: string;
  let backup: string;

  beforeAll(async () => {
    dir = project(yaml);
    const d = await startDaemon(dir);
    try {
      for (let i = 0; i < 3; i++) expect((await runSvc(["run", "quick", "--wait"], { cwd: dir })).code).toBe(0);
      backup = join(dir, "three-runs.db");
      const b = await runSvc(["backup", backup], { cwd: dir });
      expect(b.code, b.stderr).toBe(0);
      expect(b.stdout).toContain("backed up 3 runs");
      for (let i = 0; i < 2; i++) expect((await runSvc(["run", "quick", "--wait"], { cwd: dir })).code).toBe(0);

      const refused = await runSvc(["restore", backup], { cwd: dir });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^svc: a daemon is running \(pid \d+\) for .*svc\.yaml: stop it with `svc stop`, then restore\n$/);
    } finally {
      expect(await d.stop()).toBe(0);
    }
  }, 60_000);
  afterAll(() => cleanup(dir));

  const db = () => join(dir, ".svc", "svc.db");
  const runsIn = (file: string) => {
    const c = openCopy(file);
    try {
      return c.prepare("SELECT count(*) FROM job_runs").pluck().get() as number;
    } finally {
      c.close();
    }
  };

  it("refuses a database from a newer svc and leaves the current one as it was", async () => {
    const newer = join(dir, "newer.db");
    copyFileSync(backup, newer);
    const w = new Database(newer);
    w.pragma("user_version = 99");
    w.close();
    const before = readFileSync(db());
    const r = await runSvc(["restore", newer], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("was written by a newer svc (schema version 99, this svc knows up to");
    expect(r.stderr).toContain("upgrade svc first");
    expect(readFileSync(db()).equals(before)).toBe(true);
    expect(readdirSync(join(dir, ".svc")).filter((f) => f.includes(".bak-"))).toEqual([]);
  });

  it("refuses a file that is not an svc database, or a damaged one", async () => {
    const other = join(dir, "other.db");
    const o = new Database(other);
    o.exec("CREATE TABLE t (x)");
    o.close();
    const r1 = await runSvc(["restore", other], { cwd: dir });
    expect(r1.code).toBe(1);
    expect(r1.stderr).toContain("is not an svc database");

    const damaged = join(dir, "damaged.db");
    const bytes = readFileSync(backup);
    bytes.fill(0x5a, 4096 * 2, 4096 * 4); // two pages of garbage
    writeFileSync(damaged, bytes);
    const r2 = await runSvc(["restore", damaged], { cwd: dir });
    expect(r2.code).toBe(1);
    expect(r2.stderr).toMatch(/fails PRAGMA integrity_check|is damaged or unreadable/);
    expect(runsIn(db())).toBe(5);
  });

  it("puts the backup in place, keeps the old database as svc.db.bak-<UTC time>, and the daemon serves it", async () => {
    const r = await runSvc(["restore", backup], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("(3 runs, schema");
    const baks = readdirSync(join(dir, ".svc")).filter((f) => /^svc\.db\.bak-\d{8}T\d{6}Z$/.test(f));
    expect(baks).toHaveLength(1);
    expect(r.stdout).toContain(baks[0]);
    expect(runsIn(join(dir, ".svc", baks[0]!))).toBe(5);
    expect(runsIn(db())).toBe(3);
    expect(existsSync(join(dir, ".svc", "svcd.pid"))).toBe(false); // the lock restore took is released

    const d = await startDaemon(dir);
    try {
      const audit = await d.api<{ total: number }>("GET", "/api/audit");
      expect(audit.body.total).toBe(3);
    } finally {
      await d.stop();
    }
  }, 30_000);

  it("restores into a project whose data directory does not exist yet (a new machine), creating it private", async () => {
    const fresh = project(yaml);
    try {
      expect(existsSync(join(fresh, ".svc"))).toBe(false);
      const r = await runSvc(["restore", backup], { cwd: fresh });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(statSync(join(fresh, ".svc")).mode & 0o777).toBe(0o700);
      expect(runsIn(join(fresh, ".svc", "svc.db"))).toBe(3);
    } finally {
      cleanup(fresh);
    }
  });
});
