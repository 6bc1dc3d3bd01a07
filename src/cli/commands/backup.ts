/**
 * `svc backup FILE` and `svc restore FILE` (CONTRACT §7.4).
 *
 * backup: through the running daemon (SQLite's online backup, safe while
 * jobs run and log); the daemon writes FILE itself when it is local (Unix
 * socket or api.addr), and streams the copy back when it is remote (--addr,
 * SVC_ADDR). Without a daemon the database file is copied the same way,
 * opened read only.
 *
 * restore: offline only. It takes the daemon's PID lock for the time it
 * works (so no daemon can start meanwhile, and a running one makes it
 * refuse), checks FILE, and keeps the old database as svc.db.bak-<UTC stamp>.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { acquirePidLock, LockHeldError } from "../../daemon/pidLock.js";
import type { BackupResult } from "../../store/backup.js";
import { clientFor, clientGlobals, DaemonClient } from "../client/index.js";
import { shownPath } from "../client/present.js";
import { NoDaemonError, projectPaths, shownUrl, type ClientGlobals } from "../client/target.js";
import type { CliContext } from "../context.js";
import { CliError, printJson, printLine } from "../output.js";

/** A backup of a large database takes a while: at least this long before the client gives up. */
const BACKUP_TIMEOUT_MS = 30 * 60_000;

export function register(program: Command, ctx: CliContext): void {
  program
    .command("backup")
    .description("write a consistent copy of the database to FILE while the daemon runs (SQLite online backup, checked with integrity_check)")
    .argument("<file>", "where to write the copy (replaced if it exists)")
    .option("--json", 'print {"path", "bytes", "schema_version", "runs", "integrity", ...}')
    .action((file: string, opts: { json?: boolean }, cmd: Command) => backup(ctx, cmd, resolve(ctx.cwd, file), opts.json === true));

  program
    .command("restore")
    .description("replace the database with a backup FILE (the daemon must be stopped); the old one is kept as svc.db.bak-<UTC time>")
    .argument("<file>", "a backup made by `svc backup`")
    .option("--json", 'print {"database", "previous", "schema_version", "runs"}')
    .action((file: string, opts: { json?: boolean }, cmd: Command) => restore(ctx, clientGlobals(cmd), resolve(ctx.cwd, file), opts.json === true));
}

async function backup(ctx: CliContext, cmd: Command, file: string, json: boolean): Promise<void> {
  let result: BackupResult | { path: string; bytes: number; schema_version: number; runs: number };
  let how: string;
  try {
    const client = await clientFor(cmd, ctx);
    const slow = new DaemonClient(client.target, Math.max(client.timeoutMs, BACKUP_TIMEOUT_MS));
    client.close();
    try {
      const t = slow.target;
      if (t.kind === "unix" || t.source === "api.addr") {
        result = await slow.post<BackupResult>("/api/db/backup", { path: file });
        how = "by the daemon (online backup)";
      } else {
        const got = await slow.download("POST", "/api/db/backup", file);
        result = { path: file, bytes: got.bytes, schema_version: Number(got.headers["x-svc-schema-version"]), runs: Number(got.headers["x-svc-runs"]) };
        how = `from the daemon at ${shownUrl(t.url)} (online backup)`;
      }
    } finally {
      slow.close();
    }
  } catch (e) {
    if (!(e instanceof NoDaemonError)) throw e;
    const db = await databasePath(ctx, clientGlobals(cmd));
    const { backupFile } = await import("../../store/backup.js");
    try {
      result = await backupFile(db, file);
    } catch (err) {
      throw new CliError(`backup failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    how = "from the database file (no daemon is running)";
  }
  if (json) return printJson(ctx.output, result);
  printLine(ctx.output, `backed up ${result.runs} runs (${result.bytes} bytes, schema ${result.schema_version}) to ${shownPath(ctx.cwd, result.path)} ${how}`);
}

async function restore(ctx: CliContext, globals: ClientGlobals, file: string, json: boolean): Promise<void> {
  const { projectFile, dataDir } = projectPaths(ctx, globals);
  const db = await databasePath(ctx, globals);
  const { restoreFrom } = await import("../../store/backup.js");
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  let lock;
  try {
    // A new machine has no data directory yet: restoring is how it gets its database.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    lock = acquirePidLock(join(dataDir, "svcd.pid"), quiet);
  } catch (e) {
    if (e instanceof LockHeldError) {
      throw new CliError(`a daemon is running (pid ${e.pid}) for ${projectFile}: stop it with \`svc stop\`, then restore`);
    }
    throw new CliError(`cannot use the data directory ${shownPath(ctx.cwd, dataDir)}: ${e instanceof Error ? e.message : String(e)}`);
  }
  let r;
  try {
    r = restoreFrom(file, db);
  } catch (e) {
    throw new CliError(e instanceof Error ? e.message : String(e));
  } finally {
    lock.release();
  }
  if (json) return printJson(ctx.output, { database: r.database, previous: r.previous, schema_version: r.schemaVersion, runs: r.runs });
  printLine(ctx.output, `restored ${shownPath(ctx.cwd, r.database)} from ${shownPath(ctx.cwd, file)} (${r.runs} runs, schema ${r.schemaVersion})`);
  if (r.previous) printLine(ctx.output, `the previous database is kept as ${shownPath(ctx.cwd, r.previous)}`);
  printLine(ctx.output, "start the daemon with `svc start` (migrations, if any, run at its start)");
}

/** storage.sqlite.path of svcd.yaml, else <data>/svc.db: the file the daemon opens. */
async function databasePath(ctx: CliContext, globals: ClientGlobals): Promise<string> {
  const { projectFile, dataDir } = projectPaths(ctx, globals);
  const { findDaemonConfig, formatIssue, loadDaemonConfig } = await import("../../config/index.js");
  const cfg = loadDaemonConfig(findDaemonConfig(projectFile, globals.daemonConfig, ctx.cwd), ctx.env);
  if (!cfg.ok) throw new CliError(`svcd.yaml is invalid, so the database path is unknown: ${formatIssue(cfg.errors[0]!)}`);
  return cfg.value.storage.sqlite.path ?? join(dataDir, "svc.db");
}
