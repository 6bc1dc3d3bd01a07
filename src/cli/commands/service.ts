/**
 * `svc service install [--user|--system] [--print] [--name NAME]` and
 * `svc service uninstall [--user|--system] [--name NAME]` (CONTRACT §7.4):
 * a systemd unit that runs this project's svcd at boot and restarts it after
 * a crash. src/daemon/systemdUnit.ts renders the unit and says why it stops
 * the way it does.
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { renderUnit, unitName, type UnitScope } from "../../daemon/systemdUnit.js";
import { shownPath } from "../client/present.js";
import { projectPaths } from "../client/target.js";
import { globalsOf, type CliContext } from "../context.js";
import { CliError, printLine, UsageError } from "../output.js";

const SVCD_LAUNCHER = new URL("../../../bin/svcd", import.meta.url);

interface ServiceOptions {
  user?: boolean;
  system?: boolean;
  print?: boolean;
  name?: string;
}

export function register(program: Command, ctx: CliContext): void {
  const service = program.command("service").description("run this project's daemon under systemd (start at boot, restart after a crash)");
  service
    .command("install")
    .description("write a systemd unit for this project (--user: ~/.config/systemd/user, the default unless root; --system: /etc/systemd/system)")
    .option("--user", "a user unit (systemctl --user)")
    .option("--system", "a system unit, run as the owner of svc.yaml")
    .option("--print", "print the unit instead of writing it")
    .option("--name <name>", "unit name (default: svc-<project directory name>)")
    .action((opts: ServiceOptions, cmd: Command) => install(ctx, cmd, opts));
  service
    .command("uninstall")
    .description("stop and disable the unit (when systemd runs) and remove it")
    .option("--user", "the user unit (default unless root)")
    .option("--system", "the system unit")
    .option("--name <name>", "unit name (default: svc-<project directory name>)")
    .action((opts: ServiceOptions, cmd: Command) => uninstall(ctx, cmd, opts));
}

function scopeOf(opts: ServiceOptions): UnitScope {
  if (opts.user && opts.system) throw new UsageError("--user and --system exclude each other", "see 'svc service install --help'");
  if (opts.user) return "user";
  if (opts.system) return "system";
  return process.getuid?.() === 0 ? "system" : "user";
}

function nameOf(opts: ServiceOptions, projectFile: string): string {
  if (opts.name === undefined) return unitName(dirname(projectFile));
  const n = opts.name.endsWith(".service") ? opts.name : `${opts.name}.service`;
  if (!/^[A-Za-z0-9_.@-]+\.service$/.test(n)) throw new UsageError(`--name: "${opts.name}" is not a unit name (letters, digits, _ . @ -)`);
  return n;
}

/** Where systemd reads units of this scope ($XDG_CONFIG_HOME is honoured for user units, as systemd does). */
function unitDir(ctx: CliContext, scope: UnitScope): string {
  if (scope === "system") return "/etc/systemd/system";
  const config = ctx.env.XDG_CONFIG_HOME && ctx.env.XDG_CONFIG_HOME.startsWith("/") ? ctx.env.XDG_CONFIG_HOME : join(ctx.env.HOME ?? homedir(), ".config");
  return join(config, "systemd", "user");
}

async function install(ctx: CliContext, cmd: Command, opts: ServiceOptions): Promise<void> {
  const scope = scopeOf(opts);
  const globals = globalsOf(cmd);
  const { projectFile } = projectPaths(ctx, globals);
  const { findDaemonConfig, formatIssue, loadDaemonConfig } = await import("../../config/index.js");
  const daemonConfigFile = findDaemonConfig(projectFile, globals.daemonConfig, ctx.cwd);
  const cfg = loadDaemonConfig(daemonConfigFile, ctx.env);
  if (!cfg.ok) throw new CliError(`svcd.yaml is invalid: ${formatIssue(cfg.errors[0]!)} (fix it first: \`svc validate\`)`);
  const dataDirFlag = globals.dataDir ?? ctx.env.SVC_DATA_DIR;
  const unit = renderUnit({
    scope,
    svcd: realpathSync(fileURLToPath(SVCD_LAUNCHER)),
    nodeDir: dirname(process.execPath),
    config: projectFile,
    dataDir: dataDirFlag ? resolve(ctx.cwd, dataDirFlag) : null,
    daemonConfig: globals.daemonConfig ? resolve(ctx.cwd, globals.daemonConfig) : null,
    shutdownTimeoutMs: cfg.value.scheduler.shutdownTimeoutMs,
    killGraceMs: cfg.value.executor.killGraceMs,
    user: scope === "system" ? ownerName(projectFile) : null,
  });
  if (opts.print) {
    ctx.output.out(unit);
    return;
  }
  const name = nameOf(opts, projectFile);
  const dir = unitDir(ctx, scope);
  const file = join(dir, name);
  const existed = existsSync(file);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${file}.tmp`, unit, { mode: 0o644 });
    renameSync(`${file}.tmp`, file);
  } catch (e) {
    rmSync(`${file}.tmp`, { force: true });
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    throw new CliError(`cannot write ${file} (${code})${scope === "system" ? ": system units need root (sudo), or use --user" : ""}`);
  }
  const sc = scope === "user" ? "systemctl --user" : "systemctl";
  printLine(ctx.output, `${existed ? "updated" : "wrote"} ${shownPath(ctx.cwd, file)}`);
  if (systemdRuns()) systemctl(scope, ["daemon-reload"], ctx);
  printLine(ctx.output, "start it now and at every boot:");
  if (!systemdRuns()) printLine(ctx.output, `  ${sc} daemon-reload`);
  printLine(ctx.output, `  ${sc} enable --now ${name}`);
  if (scope === "user") printLine(ctx.output, `  loginctl enable-linger ${userInfo().username}   # start at boot, without a login session`);
  printLine(ctx.output, `logs: journalctl ${scope === "user" ? "--user " : ""}-u ${name}; reload: ${sc} reload ${name}`);
}

async function uninstall(ctx: CliContext, cmd: Command, opts: ServiceOptions): Promise<void> {
  const scope = scopeOf(opts);
  const { projectFile } = projectPaths(ctx, globalsOf(cmd));
  const name = nameOf(opts, projectFile);
  const dir = unitDir(ctx, scope);
  const file = join(dir, name);
  if (!existsSync(file)) throw new CliError(`no unit ${name} in ${dir} (see \`svc service install\`; --name if it was installed under another name)`);
  if (systemdRuns()) systemctl(scope, ["disable", "--now", name], ctx);
  rmSync(file);
  // What `systemctl enable` made, when systemd was not there to disable it.
  const wants = join(dir, `${scope === "user" ? "default" : "multi-user"}.target.wants`, name);
  if (isSymlink(wants)) rmSync(wants);
  printLine(ctx.output, `removed ${shownPath(ctx.cwd, file)}`);
  if (systemdRuns()) systemctl(scope, ["daemon-reload"], ctx);
  else printLine(ctx.output, `systemd is not running here: if the service runs elsewhere, stop it with \`${scope === "user" ? "systemctl --user" : "systemctl"} disable --now ${name}\``);
}

/** systemd is the init system (sd_booted's test). */
function systemdRuns(): boolean {
  return existsSync("/run/systemd/system");
}

function systemctl(scope: UnitScope, args: string[], ctx: CliContext): void {
  const r = spawnSync("systemctl", [...(scope === "user" ? ["--user"] : []), ...args], { encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) {
    const why = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split("\n")[0];
    ctx.output.err(`svc: warning: systemctl ${args.join(" ")} failed: ${why}\n`);
  }
}

/** The name of the user who owns svc.yaml (svcd runs as them), from /etc/passwd; the numeric uid otherwise. */
function ownerName(file: string): string {
  const uid = statSync(file).uid;
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const f = line.split(":");
      if (f.length > 2 && Number(f[2]) === uid) return f[0]!;
    }
  } catch {
    // no /etc/passwd: the uid will do
  }
  return String(uid);
}

function isSymlink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}
