/**
 * `svc start` and `svc stop` against real daemons, and the faults a client
 * meets: startup failures (the daemon's own error text, exit 1), a daemon
 * already running, no daemon at all, and a daemon killed with SIGKILL while
 * `svc logs --tail` follows a run.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hasStackTrace, SVCD_BIN } from "./helpers/cli.js";
import { alive, clientProject, spawnSvc, until, type ClientProject } from "./helpers/daemonClient.js";

const SLOW = `jobs:
  slow:
    command: for i in $(seq 1 600); do echo "tick $i"; sleep 0.1; done
  quick:
    command: echo quick
`;

const projects: ClientProject[] = [];
function project(files: Record<string, string>, opts: { dataDir?: string } = {}): ClientProject {
  const p = clientProject(files, opts);
  projects.push(p);
  return p;
}
afterAll(async () => {
  for (const p of projects) await p.stop();
  for (const p of projects) p.remove();
});

/** Until the kernel has let go of `pid` (a SIGKILLed daemon stays a zombie until PID 1 reaps it). */
async function reaped(pid: number): Promise<void> {
  await until(`pid ${pid} to be reaped`, () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  }, 15_000);
}

describe("svc start", () => {
  it("starts a detached daemon that outlives svc, writes its output to <data>/svcd.out, and prints the URL", async () => {
    const p = project({ "svc.yaml": SLOW });
    const r = await p.svc(["start"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`http://${p.addr()}/\n`);
    const pid = p.pid()!;
    expect(alive(pid)).toBe(true);
    // Started like bin/svcd starts it: one malloc arena (src/daemon/launcher.ts).
    expect(readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")).toContain("MALLOC_ARENA_MAX=1");
    expect(readFileSync(join(p.dataDir, "svcd.out"), "utf8")).toContain("started");
    expect((await p.svc(["status"])).code).toBe(0);
    const stop = await p.svc(["stop"]);
    expect(stop.stdout.trim()).toBe(`stopped the daemon (pid ${pid})`);
    expect(existsSync(join(p.dataDir, "api.addr"))).toBe(false);
  });

  it("passes --data-dir and --daemon-config to the daemon", async () => {
    const p = project({ "svc.yaml": SLOW, "conf/other.yaml": "log:\n  level: debug\n" });
    const data = join(p.dir, "elsewhere");
    try {
      const r = await p.svc(["--data-dir", data, "--daemon-config", "conf/other.yaml", "start"]);
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(data, "svcd.sock"))).toBe(true);
      const info = await p.svc(["--data-dir", data, "export"]);
      expect(JSON.parse(info.stdout).daemon).toMatchObject({ daemon_config_path: p.path("conf/other.yaml"), data_dir: data });
      expect((await p.svc(["--data-dir", data, "stop"])).code).toBe(0);
    } finally {
      const pid = Number.parseInt(existsSync(join(data, "svcd.pid")) ? readFileSync(join(data, "svcd.pid"), "utf8") : "", 10);
      if (Number.isInteger(pid) && alive(pid)) process.kill(pid, "SIGKILL");
    }
  });

  it("a bad svc.yaml: prints the daemon's own error lines and exits 1", async () => {
    const p = project({ "svc.yaml": 'jobs:\n  a:\n    command: x\n    frequency: daily\n    time: "2561"\n  b:\n    command: y\n    on_failure: explode\n' });
    const r = await p.svc(["start"]);
    expect(r.code).toBe(1);
    const errLines = r.stderr.trim().split("\n");
    expect(errLines[0]).toMatch(/^svcd: .*svc\.yaml:5:\d+: jobs\.a\.time: must be 4 digits HHMM/);
    expect(errLines[1]).toMatch(/^svcd: .*svc\.yaml:\d+:\d+: jobs\.b\.on_failure: /);
    expect(errLines.at(-1)).toBe("svc: the daemon did not start (exit 1); its output is in .svc/svcd.out");
    expect(hasStackTrace(r.stderr)).toBe(false);
    expect(p.pid()).toBeNull();
  });

  it("a dependency cycle and missing TLS files: the daemon's reason, exit 1", async () => {
    const cycle = project({ "svc.yaml": "jobs:\n  a:\n    command: x\n    depends_on: [b]\n  b:\n    command: y\n    depends_on: [a]\n" });
    const c = await cycle.svc(["start"]);
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/^svcd: .*(a -> b -> a|b -> a -> b)/m);
    const tls = project({ "svc.yaml": SLOW, "svcd.yaml": "api:\n  tls:\n    enabled: true\n    cert: /nonexistent/cert.pem\n    key: /nonexistent/key.pem\n" });
    const t = await tls.svc(["start"]);
    expect(t.code).toBe(1);
    expect(t.stderr).toContain("svcd: api.tls.cert: /nonexistent/cert.pem does not exist");
  });

  it("a daemon already running (even one started in the foreground): exit 1, names its pid", async () => {
    const p = project({ "svc.yaml": SLOW });
    const fg = spawn(process.execPath, [SVCD_BIN, "-c", p.path("svc.yaml")], { cwd: p.dir, stdio: "ignore" });
    try {
      await until("the foreground daemon", () => existsSync(join(p.dataDir, "svcd.sock")));
      const r = await p.svc(["start"]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(`svc: daemon already running (pid ${fg.pid}) for ${p.path("svc.yaml")}; stop it with \`svc stop\``);
      // and svc stop stops a foreground daemon too
      expect((await p.svc(["stop"])).code).toBe(0);
      await new Promise((r) => (fg.exitCode === null ? fg.once("exit", r) : r(null)));
    } finally {
      fg.kill("SIGKILL");
    }
  });
});

describe("svc start and the daemon lock", () => {
  it("a pid file left by a killed daemon, naming a live process that is not one (pid reused): svc start starts", async () => {
    const p = project({ "svc.yaml": SLOW });
    mkdirSync(p.dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(p.dataDir, "svcd.pid"), "1\n"); // pid 1 is alive, and holds no daemon lock
    const r = await p.svc(["start"]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(p.dataDir, "svcd.pid"), "utf8").trim()).not.toBe("1");
  });

  it("three svc start at once: one starts the daemon (exit 0), the others say it runs (exit 1)", async () => {
    const p = project({ "svc.yaml": SLOW });
    const rs = await Promise.all([p.svc(["start"]), p.svc(["start"]), p.svc(["start"])]);
    expect(rs.map((r) => r.code).sort()).toEqual([0, 1, 1]);
    const pid = Number(readFileSync(join(p.dataDir, "svcd.pid"), "utf8").trim());
    for (const r of rs.filter((x) => x.code === 1)) expect(r.stderr).toContain(`daemon already running (pid ${pid})`);
  });
});

describe("no daemon", () => {
  it("every client command says so, names svc.yaml and how to start one (exit 1)", async () => {
    const p = project({ "svc.yaml": SLOW });
    for (const args of [["status"], ["run", "quick"], ["logs", "quick"], ["audit"], ["export"], ["tags", "list"], ["integrations", "list"], ["dash"], ["reload"]]) {
      const r = await p.svc(args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toBe(`svc: no daemon for ${p.path("svc.yaml")}: start it with \`svc start\`\n`);
    }
    // Stopping what does not run is done, as `systemctl stop` of a stopped unit: exit 0, with a note.
    const stop = await p.svc(["stop"]);
    expect(stop.code).toBe(0);
    expect(stop.stderr).toBe(`svc: no daemon is running for ${p.path("svc.yaml")}: nothing to stop\n`);
  });

  it("without any svc.yaml the message says where it looked (exit 1)", async () => {
    const p = project({});
    const r = await p.svc(["status"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^svc: no svc\.yaml found in .* or any parent directory/);
  });
});

describe("a daemon that dies", () => {
  it("killed with SIGKILL during logs --tail: one clear line, exit 1; then svc says the socket is stale; svc start recovers", async () => {
    const p = project({ "svc.yaml": SLOW });
    await p.start();
    const pid = p.pid()!;
    const started = await p.svc(["run", "slow", "--json"]);
    const id = JSON.parse(started.stdout).run_id as number;
    const tail = spawnSvc(p, ["logs", "slow", "--tail"]);
    const wait = spawnSvc(p, ["run", "quick", "--wait"]);
    try {
      await until("ticks on the tail", () => tail.stdout().includes("tick 3\n"), 20_000);
      process.kill(pid, "SIGKILL");
      expect(await tail.exited).toBe(1);
      const errLines = tail.stderr().trim().split("\n");
      expect(errLines).toHaveLength(1);
      expect(errLines[0]).toMatch(
        new RegExp(`^svc: lost the connection to the daemon while following run ${id} \\(close code 1006\\): the daemon stopped or died; see .*svcd\\.out`),
      );
      expect(await wait.exited).not.toBe(null); // ended, whichever way the quick run went
    } finally {
      tail.kill("SIGKILL");
      wait.kill("SIGKILL");
    }
    const after = await p.svc(["status"]);
    expect(after.code).toBe(1);
    expect(after.stderr.trim()).toBe(
      `svc: no daemon for ${p.path("svc.yaml")}: start it with \`svc start\` (nothing listens on ${join(p.dataDir, "svcd.sock")}; it is left over from a daemon that died)`,
    );
    await reaped(pid);
    const again = await p.svc(["start"]);
    expect(again.code, again.stderr).toBe(0);
    // the run lost with the daemon is FAILED after recovery
    const run = JSON.parse((await p.svc(["history", "slow", "--json"])).stdout).runs.find((r: { id: number }) => r.id === id);
    expect(run.status === "FAILED" || run.status === "RETRYING" || run.status === "RUNNING").toBe(true);
  });

  it("killed while `svc stop` waits for its runs to drain: stop says so at once, not after its timeout", async () => {
    const p = project({ "svc.yaml": SLOW });
    await p.start();
    const pid = p.pid()!;
    await p.svc(["run", "slow", "--json"]);
    const stop = spawnSvc(p, ["stop", "--timeout", "60"]);
    try {
      await until("stop to wait for the slow run", () => stop.stderr().includes("waiting for 1 running job"), 20_000);
      const t0 = Date.now();
      process.kill(pid, "SIGKILL");
      expect(await stop.exited).toBe(1);
      expect(Date.now() - t0).toBeLessThan(30_000); // well before --timeout
      expect(stop.stderr()).toContain(`svc: the daemon (pid ${pid}) ended without finishing its stop (killed, or it crashed: see its log)`);
    } finally {
      stop.kill("SIGKILL");
    }
    await reaped(pid);
  });

  it("restart refuses --addr and SVC_ADDR: it would stop that daemon and start this project's", async () => {
    const p = project({ "svc.yaml": SLOW });
    for (const r of [await p.svc(["--addr", "127.0.0.1:1", "restart"]), await p.svc(["restart"], { env: { SVC_ADDR: "127.0.0.1:1" } })]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^svc: svc restart restarts this project's daemon on this machine; it does not take --addr or SVC_ADDR/);
    }
    expect(p.pid()).toBeNull();
  });

  it("stop --force kills running jobs and returns promptly", async () => {
    const p = project({ "svc.yaml": SLOW });
    await p.start();
    await p.svc(["run", "slow"]);
    await until("slow to run", async () => JSON.parse((await p.svc(["status", "--json"])).stdout).jobs.find((j: { name: string }) => j.name === "slow").last_run?.status === "RUNNING");
    const t0 = Date.now();
    const r = await p.svc(["stop", "--force", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ stopped: true, force: true });
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(p.pid()).toBeNull();
  });
});

describe("svc logs --tag", () => {
  it("shows each job's run going on, not a newer one refused at once; -f picks up older runs as they start (a backfill)", async () => {
    const p = project({
      "svc.yaml": `jobs:\n  slow:\n    tags: [t]\n    command: for i in $(seq 1 600); do echo "tick $i"; sleep 0.1; done\n  hourly:\n    tags: [t]\n    frequency: hourly\n    timezone: UTC\n    command: echo "slot $SVC_SCHEDULED_AT"; sleep 1.5\n`,
    });
    await p.start();
    const going = JSON.parse((await p.svc(["run", "slow", "--json"])).stdout).run_id as number;
    await until("ticks", async () => (await p.svc(["logs", "slow", "--run", String(going)])).stdout.includes("tick 2"), 20_000);
    expect(JSON.parse((await p.svc(["run", "slow", "--json"])).stdout).status).toBe("SKIPPED");
    expect((await p.svc(["logs", "--tag", "t"])).stdout).toMatch(/^slow\s+\| tick 2$/m);

    // Three past slots, all created before the tail starts (lower ids than any it waits for), started one by one:
    // each is followed as it starts.
    const hour = 3_600_000;
    const to = new Date(Math.floor(Date.now() / hour) * hour).toISOString();
    const from = new Date(Date.parse(to) - 3 * hour).toISOString();
    const b = await p.svc(["backfill", "hourly", "--from", from, "--to", to, "--json"]);
    expect(b.code, b.stderr).toBe(0);
    const tail = spawnSvc(p, ["logs", "--tag", "t", "-f"]);
    try {
      await until("three slots on the tail", () => (tail.stdout().match(/^hourly\s+\| slot /gm) ?? []).length === 3, 30_000);
    } finally {
      tail.kill("SIGINT");
      await tail.exited;
      await p.svc(["cancel", "slow"]);
    }
  });
});

describe("svc logs JOB", () => {
  it("logs JOB shows the run that is going on, not a newer one refused at once (SKIPPED by concurrency forbid)", async () => {
    const p = project({ "svc.yaml": SLOW });
    await p.start();
    const first = JSON.parse((await p.svc(["run", "slow", "--json"])).stdout).run_id as number;
    await until("ticks", async () => (await p.svc(["logs", "slow", "--run", String(first)])).stdout.includes("tick 2"), 20_000);
    const second = await p.svc(["run", "slow", "--json"]);
    expect(JSON.parse(second.stdout).status).toBe("SKIPPED");
    const logs = await p.svc(["logs", "slow"]);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain("tick 2");
    expect(logs.stderr).not.toMatch(/SKIPPED/);
    await p.svc(["cancel", "slow"]);
  });

  it("logs JOB shows the newest run that started, not a newer one waiting PENDING at its gate", async () => {
    const p = project({
      "svc.yaml": `jobs:\n  up:\n    command: "test ! -f fail"\n    frequency: manual\n  gated:\n    command: "echo gated ran"\n    frequency: manual\n    depends_on: [up]\n`,
    });
    await p.start();
    expect((await p.svc(["run", "up", "--wait"])).code).toBe(0);
    expect((await p.svc(["run", "gated", "--wait"])).code).toBe(0);
    p.write("fail", "");
    expect((await p.svc(["run", "up", "--wait"])).code).toBe(1);
    const waiting = JSON.parse((await p.svc(["run", "gated", "--json"])).stdout) as { status: string };
    expect(waiting.status).toBe("PENDING");
    const logs = await p.svc(["logs", "gated"]);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain("gated ran");
  });

  it("-n 0 -f prints no history: only the lines written from then on", async () => {
    const p = project({ "svc.yaml": `jobs:\n  ticker:\n    command: for i in $(seq 1 30); do echo "tick $i"; sleep 0.1; done\n` });
    await p.start();
    const run = JSON.parse((await p.svc(["run", "ticker", "--json"])).stdout).run_id as number;
    await until("tick 5", async () => (await p.svc(["logs", "ticker", "--run", String(run)])).stdout.includes("tick 5"), 20_000);
    const r = await p.svc(["logs", "ticker", "-n", "0", "-f"], { timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/^tick 1$/m);
    expect(r.stdout).toMatch(/^tick 30$/m);
  });
});
