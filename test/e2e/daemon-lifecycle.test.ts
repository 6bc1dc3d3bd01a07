import { spawnSync } from "node:child_process";
import Database from "better-sqlite3";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, project, ROOT, runDaemonOnce, startDaemon, until, type DaemonProc } from "../helpers/daemonKit.js";

const daemons: DaemonProc[] = [];
const dirs: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop("SIGKILL");
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
  for (const d of dirs.splice(0)) cleanup(d);
});

function proj(yaml: string, opts: Parameters<typeof project>[1] = {}): string {
  const dir = project(yaml, opts);
  dirs.push(dir);
  return dir;
}

async function daemon(dir: string, args: string[] = []): Promise<DaemonProc> {
  const d = await startDaemon(dir, args);
  daemons.push(d);
  return d;
}

type Job = { name: string; last_run: { id: number; status: string } | null };
const jobs = async (d: DaemonProc) => (await d.api<{ jobs: Job[] }>("GET", "/api/jobs")).body.jobs;

describe("svcd lifecycle", () => {
  it("bin/svcd, the launcher: svcd starts with one malloc arena, its jobs do not inherit it, and a value of the user's own is kept", async () => {
    const dir = proj(`jobs:\n  env:\n    command: "env | grep -E '^(MALLOC_ARENA_MAX|SVCD_LAUNCHER_ENV)=' | sort || true; echo end"\n    frequency: manual\n`);
    const jobEnv = async (d: DaemonProc): Promise<string[]> => {
      const run = await d.api<{ run_id: number }>("POST", "/api/jobs/env/run");
      expect(run.status).toBe(202);
      await until("the env run to succeed", async () => (await d.api<{ status: string }>("GET", `/api/runs/${run.body.run_id}`)).body.status === "SUCCESS");
      return (await d.api<{ lines: { line: string }[] }>("GET", `/api/runs/${run.body.run_id}/logs?stream=stdout`)).body.lines.map((l) => l.line).filter((l) => !l.startsWith("--- attempt"));
    };
    const environ = (d: DaemonProc) => readFileSync(`/proc/${d.proc.pid}/environ`, "utf8").split("\0");

    const d = await startDaemon(dir, [], {}, "launcher");
    daemons.push(d);
    // The launcher execs node: the pid it was started as is svcd's, started with what the launcher set.
    expect(readFileSync(`/proc/${d.proc.pid}/cmdline`, "utf8").split("\0")).toContain(join(ROOT, "bin", "svcd.js"));
    expect(environ(d)).toEqual(expect.arrayContaining(["MALLOC_ARENA_MAX=1", "SVCD_LAUNCHER_ENV=MALLOC_ARENA_MAX"]));
    expect(await jobEnv(d)).toEqual(["end"]);
    expect(await d.stop()).toBe(0);

    const own = await startDaemon(dir, [], { MALLOC_ARENA_MAX: "4" }, "launcher");
    daemons.push(own);
    expect(environ(own)).toContain("MALLOC_ARENA_MAX=4");
    expect(environ(own).some((v) => v.startsWith("SVCD_LAUNCHER_ENV="))).toBe(false);
    expect(await jobEnv(own)).toEqual(["MALLOC_ARENA_MAX=4", "end"]);
  });

  it("binds 127.0.0.1, serves the same API on a 0600 socket, keeps api.addr, svcd.pid and svc.db 0600, and cleans up on SIGTERM", async () => {
    const dir = proj(`jobs:\n  hello:\n    command: "echo hi"\n`);
    // The daemon inherits umask 022, which would leave a 0644 request at 0644: each 0600 below is the daemon's own doing.
    const oldUmask = process.umask(0o022);
    const d = await daemon(dir).finally(() => process.umask(oldUmask));
    expect(d.addr).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(statSync(d.dataDir).mode & 0o777).toBe(0o700);
    for (const f of ["svcd.sock", "api.addr", "svcd.pid", "svc.db"]) expect([f, (statSync(join(d.dataDir, f)).mode & 0o777).toString(8)]).toEqual([f, "600"]);
    const tcp = await d.api<{ jobs: Job[] }>("GET", "/api/jobs");
    const sock = await d.sock<{ jobs: Job[] }>("GET", "/api/jobs");
    expect(sock.status).toBe(200);
    expect(sock.body).toEqual(tcp.body);
    expect(d.output()).toContain("svcd 0.1.0 started");
    // Jobs start with posix_spawn on Linux: the one-file daemon found the binding npm install built.
    // SVC_SPAWN=fork (CI runs this file again with it: npm run test:fork) forces the fork path.
    if (process.platform === "linux") expect(d.output()).toContain(`"spawn":"${process.env.SVC_SPAWN === "fork" ? "fork" : "posix_spawn"}"`);
    expect(await d.stop()).toBe(0);
    for (const f of ["api.addr", "svcd.sock", "svcd.pid"]) expect(existsSync(join(d.dataDir, f))).toBe(false);
    expect(existsSync(join(d.dataDir, "svc.db"))).toBe(true);
  });

  it("refuses a second daemon with daemon-already-running, and takes over a stale lock", async () => {
    const dir = proj(`jobs:\n  a:\n    command: "true"\n`);
    const d = await daemon(dir);
    const second = await runDaemonOnce(dir);
    expect(second.code).toBe(1);
    expect(second.output).toContain(`daemon already running (pid ${d.proc.pid})`);
    await d.stop("SIGKILL"); // leaves a stale pid file behind
    expect(existsSync(join(d.dataDir, "svcd.pid"))).toBe(true);
    const again = await daemon(dir);
    expect(again.output()).toContain("stale daemon lock");
  });

  it("svcd.lock removed under a running daemon: it takes the lock again, and a second daemon is still refused", async () => {
    const dir = proj(`jobs:\n  a:\n    command: "true"\n`);
    const d = await daemon(dir);
    const lock = join(d.dataDir, "svcd.lock");
    rmSync(lock); // "a stale lock file"
    await until("the daemon to notice and take the lock again", () => d.output().includes("started again after the data directory was put back") && existsSync(lock), 15_000);
    expect(d.output()).toContain(`the daemon lock ${lock} was removed`);
    const second = await runDaemonOnce(dir);
    expect(second.code).toBe(1);
    expect(second.output).toContain(`daemon already running (pid ${d.proc.pid})`);
  });

  it.each([
    ["a dependency cycle", `jobs:\n  a: {command: "true", depends_on: [c]}\n  b: {command: "true", depends_on: [a]}\n  c: {command: "true", depends_on: [b]}\n`, "", /a -> b -> c -> a|cycle/],
    ["auth.type oidc", `jobs:\n  a: {command: "true"}\n`, "auth:\n  type: oidc\n", /oidc is not supported yet.*issuer/],
    ["storage.engine postgres", `jobs:\n  a: {command: "true"}\n`, "storage:\n  engine: postgres\n", /postgres is not supported yet/],
    ["an unreadable TLS file", `jobs:\n  a: {command: "true"}\n`, "api:\n  tls:\n    enabled: true\n    cert: /nonexistent/cert.pem\n    key: /nonexistent/key.pem\n", /api\.tls\.cert: \/nonexistent\/cert\.pem does not exist/],
  ])("refuses to start with %s, in one clear line per error", async (_what, yaml, daemonYaml, message) => {
    const dir = proj(yaml, daemonYaml ? { daemon: daemonYaml } : {});
    const r = await runDaemonOnce(dir);
    expect(r.code).toBe(1);
    expect(r.output).toMatch(message);
    expect(r.output).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(join(dir, ".svc", "svcd.pid"))).toBe(false);
  });

  it("stops on POST /api/daemon/stop", async () => {
    const d = await daemon(proj(`jobs:\n  a: {command: "true"}\n`));
    expect((await d.api("POST", "/api/daemon/stop", {})).status).toBe(200);
    expect(await d.exited).toBe(0);
  });
});

describe("reload", () => {
  const base = `jobs:\n  slow:\n    command: "sleep 1; echo finished"\n`;

  it("SIGHUP swaps a valid config without touching a running job", async () => {
    const dir = proj(base);
    const d = await daemon(dir);
    const run = await d.api<{ run_id: number }>("POST", "/api/jobs/slow/run", {});
    await until("running", async () => (await d.api<{ status: string }>("GET", `/api/runs/${run.body.run_id}`)).body.status === "RUNNING");
    writeFileSync(join(dir, "svc.yaml"), `${base}  added:\n    command: "true"\n`);
    d.proc.kill("SIGHUP");
    await until("new job", async () => (await jobs(d)).some((j) => j.name === "added"));
    const done = await until("slow done", async () => {
      const r = await d.api<{ status: string }>("GET", `/api/runs/${run.body.run_id}`);
      return r.body.status === "SUCCESS" ? r.body : null;
    });
    expect(done.status).toBe("SUCCESS");
  });

  it("keeps the old config on an invalid file or a cycle, via SIGHUP and via the API", async () => {
    const dir = proj(base);
    const d = await daemon(dir);
    writeFileSync(join(dir, "svc.yaml"), `jobs:\n  slow:\n    command: "true"\n    frequency: daily\n    time: "2561"\n`);
    d.proc.kill("SIGHUP");
    await until("reload rejected in the log", () => d.output().includes("reload rejected"));
    expect(d.output()).toMatch(/svc\.yaml:5:\d+: jobs\.slow\.time/);
    writeFileSync(join(dir, "svc.yaml"), `jobs:\n  a: {command: "true", depends_on: [b]}\n  b: {command: "true", depends_on: [a]}\n`);
    const r = await d.api<{ error: { code: string; details: { message: string }[] } }>("POST", "/api/daemon/reload", {});
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("invalid_config");
    expect(JSON.stringify(r.body.error.details)).toMatch(/a -> b -> a|b -> a -> b/);
    expect((await jobs(d)).map((j) => j.name)).toEqual(["slow"]);
  });

  it("keeps the whole old config when the database refuses the new schedule's write, and stays up; the next reload applies", async () => {
    const dir = proj(base, { daemon: "storage:\n  sqlite:\n    busy_timeout: 300ms\n" });
    const d = await daemon(dir);
    writeFileSync(join(dir, "svc.yaml"), `${base}  added:\n    command: "true"\n    frequency: daily\n    time: "0300"\n`);
    // Another process holds the database's write lock past busy_timeout: the reload's write fails.
    const holder = new Database(join(dir, ".svc", "svc.db"));
    try {
      holder.exec("BEGIN IMMEDIATE");
      const r = await d.api<{ error: { code: string; details: { message: string }[] } }>("POST", "/api/daemon/reload", {});
      expect(r.status).toBe(422);
      expect(JSON.stringify(r.body.error.details)).toMatch(/could not be applied \(the database is locked by another process.*\); the previous config stays in effect/);
      holder.exec("ROLLBACK");
    } finally {
      holder.close();
    }
    expect(d.output()).toMatch(/reload failed: the database is locked/);
    expect((await jobs(d)).map((j) => j.name), "the old config, whole").toEqual(["slow"]);
    expect((await d.api<{ status: string }>("GET", "/api/status")).status).toBe(200);

    const again = await d.api<{ jobs: number }>("POST", "/api/daemon/reload", {});
    expect(again.status).toBe(200);
    expect((await jobs(d)).map((j) => j.name).sort()).toEqual(["added", "slow"]);
  });
});

describe("a failing notification endpoint", () => {
  it("does not delay dispatch while the receiver hangs", async () => {
    const hanging = createServer(() => {
      /* never answers */
    });
    servers.push(hanging);
    await new Promise<void>((r) => hanging.listen(0, "127.0.0.1", () => r()));
    const port = (hanging.address() as AddressInfo).port;
    const dir = proj(`jobs:
  bad:
    command: "exit 1"
    notify: {on_failure: "webhook:http://127.0.0.1:${port}/hook"}
  good:
    command: "true"
    concurrency: allow
`);
    const d = await daemon(dir);
    for (let i = 0; i < 5; i++) await d.api("POST", "/api/jobs/bad/run", {});
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await d.api<{ run_id: number }>("POST", "/api/jobs/good/run", {});
      const run = await until("good started", async () => {
        const x = await d.api<{ created_at: string; started_at: string | null }>("GET", `/api/runs/${r.body.run_id}`);
        return x.body.started_at ? x.body : null;
      });
      delays.push(Date.parse(run.started_at!) - Date.parse(run.created_at));
    }
    // A dispatch that waited for a delivery would start each run only when the hung attempt gave up, after
    // the notifier's 10 s HTTP timeout. Half of it bounds the delay from trigger to start, tens of
    // milliseconds when nothing waits (the figure: bench/isolation.bench.ts): no loaded machine gets near it.
    expect(Math.max(...delays)).toBeLessThan(5_000);
    const alerts = await d.api<{ rows: { status: string }[] }>("GET", "/api/db/alerts");
    expect(alerts.body.rows.length).toBeGreaterThan(0);
    expect(alerts.body.rows.every((a) => a.status === "pending")).toBe(true);
  });
});

describe("crash recovery", () => {
  it("after SIGKILL of the daemon, the lost run is reconciled and retried and its grandchildren are gone", async () => {
    const dir = proj(`jobs:\n  work:\n    command: "test -f again && echo recovered || { touch again; sleep 100 & sleep 100; }"\n    retries: 1\n    retry_delay: "fixed:100ms"\n`, {
      daemon: "executor:\n  kill_grace: 500ms\n",
    });
    const d = await daemon(dir);
    const r = await d.api<{ run_id: number }>("POST", "/api/jobs/work/run", {});
    const running = await until("running", async () => {
      const x = await d.api<{ status: string; pid: number }>("GET", `/api/runs/${r.body.run_id}`);
      return x.body.status === "RUNNING" ? x.body : null;
    });
    await d.stop("SIGKILL");
    const groupAlive = () => spawnSync("/bin/sh", ["-c", `kill -0 -${running.pid} 2>/dev/null`]).status === 0;
    expect(groupAlive()).toBe(true);
    const again = await daemon(dir);
    const done = await until("retried to success", async () => {
      const x = await again.api<{ status: string; attempt: number }>("GET", `/api/runs/${r.body.run_id}`);
      return x.body.status === "SUCCESS" ? x.body : null;
    });
    expect(done.attempt).toBe(2);
    await until("group gone", () => !groupAlive(), 5_000);
  });
});
