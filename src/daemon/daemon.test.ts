import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../../test/helpers/until.js";
import { Daemon, StartupError, type DaemonPaths } from "./daemon.js";

const dirs: string[] = [];
const servers: Server[] = [];
const running: Daemon[] = [];
afterEach(async () => {
  for (const d of running.splice(0)) await d.stop({ force: true });
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A project with one manual job; svcd.yaml logs to <data>/svcd.log so the test output stays clean. */
function paths(daemonYaml: string): DaemonPaths {
  const dir = mkdtempSync(join(tmpdir(), "svc-daemon-"));
  dirs.push(dir);
  writeFileSync(join(dir, "svc.yaml"), `jobs:\n  hello:\n    command: "echo hi"\n    frequency: manual\n`);
  writeFileSync(join(dir, "svcd.yaml"), `log:\n  output: file\n${daemonYaml}`);
  mkdirSync(join(dir, "web"));
  return { config: join(dir, "svc.yaml"), dataDir: join(dir, "data"), daemonConfig: join(dir, "svcd.yaml"), webRoot: join(dir, "web") };
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}

async function takePort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Listening servers in this process (TCP and Unix socket): a started API part left behind shows up here. */
function listeners(): number {
  return process.getActiveResourcesInfo().filter((k) => k === "TCPServerWrap" || k === "PipeServerWrap").length;
}

/**
 * The failed start left nothing: no server but the test's own, no lock, no api.addr, no socket, the
 * database closed (SQLite removes its -wal file at the last close); the same data directory starts
 * (and stops) again.
 */
async function expectUndone(p: DaemonPaths, ownServers: number, db = join(p.dataDir, "svc.db")): Promise<void> {
  expect(listeners(), "listening servers").toBe(ownServers);
  expect(existsSync(join(p.dataDir, "svcd.pid")), "PID lock released").toBe(false);
  expect(existsSync(join(p.dataDir, "api.addr"))).toBe(false);
  expect(existsSync(join(p.dataDir, "svcd.sock"))).toBe(false);
  expect(existsSync(`${db}-wal`), "database closed").toBe(false);
  writeFileSync(p.daemonConfig!, "log:\n  output: file\n");
  const again = new Daemon(p);
  running.push(again);
  await again.start();
  expect(await listening(Number(again.address.split(":").pop()))).toBe(true);
  await again.stop({ force: false });
  await again.done;
  expect(existsSync(join(p.dataDir, "svcd.pid"))).toBe(false);
}

describe("Daemon start: what a killed daemon left", () => {
  it("removes the copies a backup download left in the data directory, and nothing else", async () => {
    const p = paths("");
    mkdirSync(p.dataDir, { recursive: true, mode: 0o700 });
    const left = ["backup-download-4242-x.db", "backup-download-4242-x.db.partial-4242-1", "backup-download-4242-x.db.partial-4242-1-wal"];
    for (const f of left) writeFileSync(join(p.dataDir, f), "job output");
    writeFileSync(join(p.dataDir, "mine.db"), "kept");
    const d = new Daemon(p);
    running.push(d);
    await d.start();
    for (const f of left) expect(existsSync(join(p.dataDir, f)), f).toBe(false);
    expect(readFileSync(join(p.dataDir, "mine.db"), "utf8")).toBe("kept");
    const logged = () => existsSync(join(p.dataDir, "svcd.log")) && readFileSync(join(p.dataDir, "svcd.log"), "utf8").includes("removed 3 file(s) left by a backup download");
    await until("the removal logged", logged, 5_000, 20);
  });
});

describe("Daemon start: a failed start undoes the parts already started", () => {
  it("port in use: logger, lock, auth, database and engine were started; all are undone and nothing listens", async () => {
    const { port } = await takePort();
    const p = paths(`api:\n  addr: "127.0.0.1:${port}"\n`);
    const d = new Daemon(p);
    const err = await d.start().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StartupError);
    expect((err as StartupError).lines.join("\n")).toBe(`api.addr 127.0.0.1:${port} (svcd.yaml): the address is already in use (another svcd or another program listens there): stop it or set another port in api.addr`);
    expect(existsSync(join(p.dataDir, "svc.db")), "the database had been opened").toBe(true);
    expect(readFileSync(join(p.dataDir, "svcd.log"), "utf8")).not.toMatch(/svcd .* started/);
    await expectUndone(p, 1);
  });

  it("the Unix socket cannot be bound after the TCP port listens: the TCP listener is closed again", async () => {
    const { server, port } = await takePort();
    await new Promise((r) => server.close(r)); // a free port we know
    const p = paths(`api:\n  addr: "127.0.0.1:${port}"\n`);
    // A non-empty directory where the socket goes: removing a stale socket there fails.
    mkdirSync(join(p.dataDir, "svcd.sock"), { recursive: true });
    writeFileSync(join(p.dataDir, "svcd.sock", "keep"), "");
    const d = new Daemon(p);
    await expect(d.start()).rejects.toBeInstanceOf(StartupError);
    expect(await listening(port), `nothing listens on 127.0.0.1:${port}`).toBe(false);
    expect(existsSync(join(p.dataDir, "svcd.sock", "keep"))).toBe(true);
    rmSync(join(p.dataDir, "svcd.sock"), { recursive: true });
    await expectUndone(p, 0);
  });

  it("a bad database path (a directory): the logger, lock and auth started before it are undone", async () => {
    const p = paths("");
    const dbDir = join(p.dataDir, "db-is-a-dir");
    mkdirSync(dbDir, { recursive: true });
    writeFileSync(p.daemonConfig!, `log:\n  output: file\nstorage:\n  sqlite:\n    path: ${JSON.stringify(dbDir)}\n`);
    const d = new Daemon(p);
    const err = await d.start().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StartupError);
    expect((err as StartupError).lines.join("\n")).toContain(dbDir);
    await expectUndone(p, 0, dbDir);
  });
});

describe("Daemon reload", () => {
  const metrics = async (d: Daemon) => (await fetch(`http://${d.address}/metrics`)).text();
  const reloads = (text: string, result: string) => Number(new RegExp(`^svc_config_reloads_total\\{result="${result}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);

  it("reads a svcd.yaml written beside svc.yaml after startup (none at start), and shows its path", async () => {
    const p = paths("");
    rmSync(p.daemonConfig!);
    const started = { ...p, daemonConfig: null };
    const d = new Daemon(started);
    running.push(d);
    await d.start();
    const info = async () => (await (await fetch(`http://${d.address}/api/daemon/info`)).json()) as { daemon_config_path: string | null };
    const level = async () => ((await (await fetch(`http://${d.address}/api/config`)).json()) as { daemon: { log: { level: string } } }).daemon.log.level;
    expect((await info()).daemon_config_path).toBeNull();
    expect(await level()).toBe("info");
    writeFileSync(p.daemonConfig!, "log:\n  output: file\n  level: debug\n");
    expect((await d.reload()).ok).toBe(true);
    expect((await info()).daemon_config_path).toBe(p.daemonConfig);
    expect(await level()).toBe("debug");
  });

  it("drops a removed job's series at once, and counts a reload the engine could not apply as a failure", async () => {
    const p = paths("");
    writeFileSync(p.config, `jobs:\n  keep:\n    command: "true"\n    frequency: manual\n  gone:\n    command: "true"\n    frequency: manual\n`);
    const d = new Daemon(p);
    running.push(d);
    await d.start();
    const run = (await (await fetch(`http://${d.address}/api/jobs/gone/run`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).json()) as { run_id: number };
    await until("gone's run to end", async () => ((await (await fetch(`http://${d.address}/api/runs/${run.run_id}`)).json()) as { status: string }).status === "SUCCESS", 10_000, 20);
    expect(await metrics(d)).toMatch(/^svc_runs_total\{job_name="gone",status="SUCCESS",trigger="manual"\} 1$/m);

    writeFileSync(p.config, `jobs:\n  keep:\n    command: "true"\n    frequency: manual\n`);
    expect((await d.reload()).ok).toBe(true);
    const after = await metrics(d);
    expect(after).not.toContain('job_name="gone"');
    expect(reloads(after, "success")).toBe(1);

    // Valid, but the engine cannot apply it (its schedule cannot be stored): a failure, and the old config stays.
    const engine = (d as unknown as { engine: { reload(project: unknown): void } }).engine;
    const apply = engine.reload.bind(engine);
    engine.reload = () => {
      throw new Error("disk I/O error");
    };
    writeFileSync(p.config, `jobs:\n  other:\n    command: "true"\n    frequency: manual\n`);
    expect((await d.reload()).ok).toBe(false);
    engine.reload = apply;
    const failed = await metrics(d);
    expect([reloads(failed, "success"), reloads(failed, "failure")]).toEqual([1, 1]);
    const jobs = (await (await fetch(`http://${d.address}/api/jobs`)).json()) as { jobs: { name: string }[] };
    expect(jobs.jobs.map((j) => j.name)).toEqual(["keep"]);
  });
});
