/**
 * The daemon's lifecycle from the client: `svc start` (background daemon,
 * CONTRACT §1), `svc stop [--force]`, `svc restart` and `svc reload`.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import type { ConfigIssue } from "../../config/types.js";
import { formatIssue } from "../../config/issues.js";
import { clientFor, clientGlobals } from "../client/index.js";
import { ApiError } from "../client/errors.js";
import { apiError, DaemonClient } from "../client/http.js";
import { shownPath as shown } from "../client/present.js";
import { NoDaemonError, projectPaths, readAddrFile, resolveTarget, type ClientGlobals } from "../client/target.js";
import type { DaemonInfo, JobsAnswer, RunRecord } from "../client/types.js";
import { launcherEnv } from "../../daemon/launcher.js";
import type { CliContext } from "../context.js";
import { CliError, confirm, note, printError, printJson, printLine, UsageError } from "../output.js";

const START_TIMEOUT_MS = 10_000;
const POLL_MS = 50;
const SVCD_BIN = new URL("../../../bin/svcd.js", import.meta.url);

export function register(program: Command, ctx: CliContext): void {
  program
    .command("start")
    .description("start the daemon in the background; prints its URL once it answers (max 10 s)")
    .addHelpText("after", "\nThe daemon's output goes to <data>/svcd.out. `svc daemon run` (or svcd) runs it in the foreground.")
    .action((_opts: unknown, cmd: Command) => start(ctx, clientGlobals(cmd)));

  program
    .command("stop")
    .description("stop the daemon: drain running jobs (graceful, saying which), or kill them with --force; no daemon: exit 0")
    .option("--force", "kill running jobs now instead of waiting for them")
    .option("--timeout <seconds>", "how long to wait for the daemon to exit", "120")
    .option("--json", 'print {"stopped", "pid", "force"} ({"stopped": false, "running": false} when no daemon runs)')
    .action(async (opts: StopOpts, cmd: Command) => {
      const r = await stop(ctx, cmd, opts);
      if (opts.json) return printJson(ctx.output, r.pid === null ? { stopped: false, running: false } : { stopped: true, pid: r.pid, force: opts.force === true });
      if (r.pid !== null) confirm(ctx, `stopped the daemon (pid ${r.pid})`);
    });

  program
    .command("restart")
    .description("stop the daemon (draining running jobs, or --force) and start it again; prints its URL")
    .option("--force", "kill running jobs now instead of waiting for them")
    .option("--timeout <seconds>", "how long to wait for the daemon to exit", "120")
    .action(async (opts: StopOpts, cmd: Command) => {
      // `svc start` starts this project's daemon on this machine: a remote one (--addr, SVC_ADDR) would be
      // stopped, and another started here.
      const g = clientGlobals(cmd);
      if (g.addr !== undefined || (ctx.env.SVC_ADDR ?? "").trim() !== "") {
        throw new UsageError("svc restart restarts this project's daemon on this machine; it does not take --addr or SVC_ADDR: run `svc stop` there, then `svc start` where the daemon lives");
      }
      const r = await stop(ctx, cmd, opts);
      if (r.pid !== null) note(ctx, `stopped the daemon (pid ${r.pid}); starting it again`);
      await start(ctx, g);
    });

  program
    .command("reload")
    .description("reload svc.yaml and svcd.yaml in the running daemon (an invalid config is rejected and the old one stays)")
    .option("--json", 'print the daemon\'s answer {"ok", "jobs"}')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const client = await clientFor(cmd, ctx);
      const res = await client.raw<{ ok: boolean; jobs: number }>("POST", "/api/daemon/reload");
      if (res.status === 422) {
        const body = res.body as unknown as { error: { message: string; details?: ConfigIssue[] } };
        for (const issue of body.error.details ?? []) printError(ctx.output, formatIssue(issue, shown(ctx.cwd, issue.file)));
        throw new CliError(body.error.message);
      }
      if (res.status >= 400) throw apiError(res, "POST /api/daemon/reload");
      if (opts.json) printJson(ctx.output, res.body);
      else confirm(ctx, `reloaded: ${res.body.jobs} job${res.body.jobs === 1 ? "" : "s"}`);
    });
}

async function start(ctx: CliContext, globals: ClientGlobals): Promise<void> {
  const { projectFile, dataDir } = projectPaths(ctx, globals);
  await refuseIfRunning(ctx, globals, projectFile, dataDir);

  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const logPath = join(dataDir, "svcd.out");
  const fd = openSync(logPath, "a", 0o600);
  const logStart = fstatSync(fd).size;
  const args = [SVCD_BIN.pathname, "-c", projectFile, "--data-dir", dataDir];
  if (globals.daemonConfig) args.push("--daemon-config", resolve(ctx.cwd, globals.daemonConfig));
  const child = spawn(process.execPath, args, { detached: true, stdio: ["ignore", fd, fd], cwd: dirname(projectFile), env: launcherEnv(ctx.env) });
  closeSync(fd);
  let exited: string | null = null;
  child.on("exit", (code, signal) => (exited = signal ?? String(code)));
  child.on("error", (e) => (exited = e.message));

  const daemonLines = () => newLines(logPath, logStart);
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (exited !== null) {
      failStart(ctx, daemonLines(), `the daemon did not start (exit ${exited}); its output is in ${shown(ctx.cwd, logPath)}`);
    }
    // Our child, not another daemon that won the lock meanwhile (two `svc start`s at once): that
    // one answers too, and our child then exits with "daemon already running".
    const who = await answeringPid(ctx, globals);
    if (who === "refused" || who === child.pid) break;
    if (Date.now() > deadline) {
      child.kill("SIGTERM");
      failStart(ctx, daemonLines(), `the daemon did not answer within ${START_TIMEOUT_MS / 1000} s and was stopped; its output is in ${shown(ctx.cwd, logPath)}`);
    }
    await sleep(POLL_MS);
  }
  child.removeAllListeners();
  child.unref();
  printLine(ctx.output, await baseUrl(ctx, globals, projectFile, dataDir));
}

/** `daemon already running (pid N)` (CONTRACT §1) when one answers or holds the lock. */
async function refuseIfRunning(ctx: CliContext, globals: ClientGlobals, projectFile: string, dataDir: string): Promise<void> {
  const info = await daemonInfo(ctx, globals);
  if (info) throw new CliError(`daemon already running (pid ${info.pid}) for ${projectFile}; stop it with \`svc stop\``);
  const pid = await lockHolder(dataDir);
  if (pid !== null) {
    throw new CliError(`daemon already running (pid ${pid}) for ${projectFile}, but it does not answer; see ${shown(ctx.cwd, join(dataDir, "svcd.out"))}`);
  }
}

/** The pid of the daemon that answers, "refused" for an answer without it (401 without a socket and SVC_TOKEN), null for none. */
async function answeringPid(ctx: CliContext, globals: ClientGlobals): Promise<number | "refused" | null> {
  try {
    return (await daemonInfo(ctx, globals, 2_000))?.pid ?? null;
  } catch (e) {
    if (e instanceof ApiError) return "refused";
    throw e;
  }
}

/** The running daemon's info over the local transport, or null when none answers. */
async function daemonInfo(ctx: CliContext, globals: ClientGlobals, timeoutMs = 5_000): Promise<DaemonInfo | null> {
  let client: DaemonClient;
  try {
    // start/stop always manage this project's local daemon, whatever SVC_ADDR says
    client = new DaemonClient(resolveTarget({ ...ctx, env: { ...ctx.env, SVC_ADDR: "" } }, { ...globals, addr: undefined }), timeoutMs);
  } catch (e) {
    if (e instanceof NoDaemonError) return null;
    throw e;
  }
  try {
    return await client.get<DaemonInfo>("/api/daemon/info");
  } catch (e) {
    if (e instanceof ApiError) throw e; // it answers, but refuses: say why
    return null;
  } finally {
    client.close();
  }
}

/**
 * The pid in `<data>/svcd.pid` when a process holds the daemon lock (`svcd.lock`, the kernel's: see
 * src/daemon/pidLock.ts), 0 if its pid file does not say; null when nothing holds it. Whether the pid
 * is alive does not tell: a pid file left by a daemon killed with SIGKILL names a pid that another
 * process may have by now.
 */
async function lockHolder(dataDir: string): Promise<number | null> {
  const { daemonLockHeld } = await import("../../daemon/pidLock.js");
  if (!daemonLockHeld(join(dataDir, "svcd.pid"))) return null;
  try {
    const pid = Number.parseInt(readFileSync(join(dataDir, "svcd.pid"), "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : 0;
  } catch {
    return 0;
  }
}

/** The daemon's own error lines (`svcd: ...`), else its last output lines, then our summary. */
function failStart(ctx: CliContext, lines: string[], summary: string): never {
  const own = lines.filter((l) => l.startsWith("svcd: "));
  for (const l of own.length > 0 ? own : lines.slice(-20)) ctx.output.err(`${l}\n`);
  throw new CliError(summary);
}

function newLines(path: string, from: number): string[] {
  try {
    const text = readFileSync(path).subarray(from).toString("utf8");
    return text.split("\n").filter((l) => l.trim() !== "");
  } catch {
    return [];
  }
}

/** `http://127.0.0.1:PORT/` (https with api.tls, plus api.base_path) from `<data>/api.addr`. */
export async function baseUrl(ctx: CliContext, globals: ClientGlobals, projectFile: string, dataDir: string): Promise<string> {
  const addr = readAddrFile(dataDir);
  if (addr === null) throw new NoDaemonError(projectFile, ` (${shown(ctx.cwd, join(dataDir, "api.addr"))} is missing)`);
  const { findDaemonConfig, loadDaemonConfig } = await import("../../config/index.js");
  const cfg = loadDaemonConfig(findDaemonConfig(projectFile, globals.daemonConfig, ctx.cwd), ctx.env);
  const tls = cfg.ok && cfg.value.api.tls.enabled;
  const base = cfg.ok ? cfg.value.api.basePath : "";
  return `${tls ? "https" : "http"}://${addr}${base}/`;
}

interface StopOpts {
  force?: boolean;
  timeout: string;
  json?: boolean;
}

/** How often `svc stop` looks at the draining runs (the API closes soon after the last one ends). */
const DRAIN_POLL_MS = 200;

/**
 * Asks the daemon to stop and waits until it is gone, saying what it waits
 * for: the runs still draining, as they finish. No daemon is not an error
 * (as `systemctl stop` of a stopped unit): a note, and `pid: null`.
 */
async function stop(ctx: CliContext, cmd: Command, opts: StopOpts): Promise<{ pid: number | null }> {
  const seconds = Number(opts.timeout);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`--timeout must be a positive number of seconds, got "${opts.timeout}"`, `see 'svc ${cmd.name()} --help'`);
  let client: DaemonClient;
  let info: DaemonInfo;
  try {
    client = await clientFor(cmd, ctx);
    info = await client.get<DaemonInfo>("/api/daemon/info");
  } catch (e) {
    if (!(e instanceof NoDaemonError)) throw e;
    note(ctx, `no daemon is running for ${e.projectFile ?? "this project"}: nothing to stop`);
    return { pid: null };
  }
  const draining = opts.force ? new Map<number, string>() : await runningRuns(client);
  const grace = opts.force ? null : await shutdownTimeout(client);
  await client.post("/api/daemon/stop", opts.force ? { force: true } : undefined);
  if (opts.force) note(ctx, `stopping the daemon (pid ${info.pid}): killing its running jobs`);
  else if (draining.size === 0) note(ctx, `stopping the daemon (pid ${info.pid}): no job is running`);
  else {
    note(
      ctx,
      `stopping the daemon (pid ${info.pid}): waiting for ${draining.size} running job${draining.size === 1 ? "" : "s"} to finish: ${describeRuns(draining)}` +
        `${grace ? `; after ${grace} (scheduler.shutdown_timeout) they are killed` : ""}; \`svc stop --force\` kills them now`,
    );
  }
  const t = client.target;
  const local = t.kind === "unix" || t.source === "api.addr";
  const pidFile = join(info.data_dir ?? t.dataDir ?? "", "svcd.pid");
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const gone = local ? !holdsLock(pidFile, info.pid) : !(await stillAnswers(client));
    if (gone) break;
    // Gone without its pid file: died. (A clean exit removes the file first: look again, it may have just.)
    if (local && !isAlive(info.pid) && holdsLock(pidFile, info.pid)) {
      // Killed, or crashed, while stopping: its pid file stays; the next start takes the stale lock over.
      client.close();
      throw new CliError(
        `the daemon (pid ${info.pid}) ended without finishing its stop (killed, or it crashed: see its log); its runs are reconciled at the next \`svc start\``,
      );
    }
    if (Date.now() > deadline) {
      client.close();
      throw new CliError(
        `the daemon (pid ${info.pid}) is still stopping after ${seconds} s (running jobs drain for up to scheduler.shutdown_timeout); \`svc stop --force\` kills them`,
      );
    }
    if (draining.size > 0) await reportDrained(ctx, client, draining);
    await sleep(draining.size > 0 ? DRAIN_POLL_MS : 100);
  }
  client.close();
  return { pid: info.pid };
}

/** RUNNING and RETRYING runs, by id: `extract (run 9)`. */
async function runningRuns(client: DaemonClient): Promise<Map<number, string>> {
  const { jobs } = await client.get<JobsAnswer>("/api/jobs");
  const out = new Map<number, string>();
  for (const j of jobs) for (const r of j.active_runs) if (r.status !== "PENDING") out.set(r.id, `${j.name} (run ${r.id})`);
  return out;
}

function describeRuns(runs: Map<number, string>): string {
  return [...runs.values()].join(", ");
}

/** `60s`, from the daemon's effective svcd.yaml; null when it cannot be read. */
async function shutdownTimeout(client: DaemonClient): Promise<string | null> {
  try {
    const cfg = await client.get<{ daemon?: { scheduler?: { shutdown_timeout?: string } } }>("/api/config");
    return cfg.daemon?.scheduler?.shutdown_timeout ?? null;
  } catch {
    return null; // a viewer token may not read the config: the wait is still said
  }
}

/** Says which of the draining runs ended since the last look (the API answers until the daemon exits). */
async function reportDrained(ctx: CliContext, client: DaemonClient, draining: Map<number, string>): Promise<void> {
  let still: Map<number, string>;
  try {
    still = await runningRuns(client);
  } catch {
    return; // the API is closing: the pid file tells the end
  }
  for (const [id, what] of [...draining]) {
    if (still.has(id)) continue;
    draining.delete(id);
    const run = await client.get<RunRecord>(`/api/runs/${id}`).catch(() => null);
    note(ctx, `${what} ended ${run?.status ?? ""}`.trim() + (draining.size > 0 ? `; still waiting for ${describeRuns(draining)}` : "; no job is running now"));
  }
}

/** Alive and not a zombie (a killed daemon can stay one until PID 1 reaps it). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true; // no /proc (macOS): trust kill(0)
  }
}

function holdsLock(pidFile: string, pid: number): boolean {
  if (!existsSync(pidFile)) return false;
  try {
    return readFileSync(pidFile, "utf8").trim() === String(pid);
  } catch {
    return false;
  }
}

async function stillAnswers(client: DaemonClient): Promise<boolean> {
  const probe = new DaemonClient(client.target, 2_000);
  try {
    await probe.get("/api/status");
    return true;
  } catch (e) {
    return e instanceof ApiError;
  } finally {
    probe.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
