import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import type { FastifyInstance } from "fastify";
import { Authenticator, preloadValidation, buildApi, createMetrics, exposureWarning, type Metrics } from "../api/index.js";
import { formatIssue, loadDaemonConfig, loadProject } from "../config/index.js";
import type { DaemonConfig, ProjectConfig } from "../config/types.js";
import type { ReloadResult } from "../api/index.js";
import { Engine } from "../engine/engine.js";
import type { NextRunInfo } from "../engine/scheduler.js";
import { EventBus } from "../engine/events.js";
import { spawnMethod } from "../executor/index.js";
import { createNotifier, type Notifier } from "../notify/index.js";
import { describeSlot } from "../schedule/nextRun.js";
import { systemClock } from "../shared/clock.js";
import type { Logger } from "../shared/logger.js";
import { SvcError } from "../shared/svcError.js";
import { toError } from "../shared/toError.js";
import { openStore, type Store } from "../store/index.js";
import { openAuditLog } from "./audit.js";
import { digestConfigs, type LoadedConfig } from "./configDigest.js";
import { createDaemonLog, type DaemonLog } from "./logging.js";
import { acquirePidLock, type PidLock } from "./pidLock.js";
import { startRetention } from "./retentionTimer.js";
import { startUnixSocket } from "./unixSocket.js";
import { startupProblem } from "./preflight.js";
import { VERSION } from "../shared/version.js";

export interface DaemonPaths {
  config: string;
  dataDir: string;
  daemonConfig: string | null;
  webRoot: string;
}

/** A startup failure: `lines` are printed to stderr one per line, exit code 1. */
export class StartupError extends SvcError {
  constructor(readonly lines: string[]) {
    super("internal", lines.join("\n"));
    this.name = "StartupError";
  }
}


/** Startup "next run" lines logged per event-loop turn. */
const NEXT_RUN_LOG_SLICE = 200;
/** How often the daemon checks that its data directory and database file are still there. */
const DATA_DIR_CHECK_MS = 2_000;


/**
 * svcd: one daemon for one project. Start records each part it started so
 * that a failed start undoes exactly those, and stop is safe to call twice
 * (STYLE: Dagu's Start/stopOnce).
 */
export class Daemon {
  private readonly undo: { name: string; fn: () => unknown }[] = [];
  private stopping: Promise<void> | null = null;
  private log!: Logger;
  private daemonLog: DaemonLog | null = null;
  private store!: Store;
  private engine!: Engine;
  private notifier!: Notifier;
  private metrics: Metrics | null = null;
  private app: FastifyInstance | null = null;
  private auth: Authenticator | null = null;
  private project!: ProjectConfig;
  private daemonConfig!: DaemonConfig;
  private readonly startedAt = Date.now();
  private loadedConfig!: LoadedConfig;
  private nextRunsLog: NodeJS.Immediate | null = null;
  /** Set when the data directory or database file was removed: stop, put it back, start again. */
  private lost: { saveDatabase: boolean } | null = null;
  /** Resolves when the daemon has stopped. */
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  address = "";

  constructor(private readonly paths: DaemonPaths) {
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  async start(): Promise<void> {
    try {
      await this.startParts();
    } catch (e) {
      await this.runUndo();
      if (e instanceof StartupError) throw e;
      throw new StartupError([toError(e).message]);
    }
  }

  private onUndo(name: string, fn: () => unknown): void {
    this.undo.push({ name, fn });
  }

  private async startParts(): Promise<void> {
    const { paths } = this;
    mkdirSync(paths.dataDir, { recursive: true, mode: 0o700 });
    chmodSync(paths.dataDir, 0o700);

    const daemonCfg = loadDaemonConfig(paths.daemonConfig);
    if (!daemonCfg.ok) throw new StartupError(daemonCfg.errors.map((i) => formatIssue(i)));
    this.daemonConfig = daemonCfg.value;
    const problem = startupProblem(this.daemonConfig);
    if (problem) throw new StartupError([problem]);

    this.daemonLog = createDaemonLog(this.daemonConfig.log, paths.dataDir);
    this.log = this.daemonLog.logger;
    this.onUndo("logger", () => this.daemonLog?.close());

    const lock: PidLock = acquirePidLock(join(paths.dataDir, "svcd.pid"), this.log);
    this.onUndo("pid lock", () => lock.release());
    for (const w of daemonCfg.warnings) this.log.warn({ file: w.file, line: w.line, path: w.path }, formatIssue(w));

    // A missing or empty token file refuses startup (on reload the old tokens stay).
    const auth = new Authenticator(this.log);
    const authReady = auth.configure(this.daemonConfig.auth);
    if (!authReady.ok) throw new StartupError([authReady.error]);
    this.auth = auth;
    this.onUndo("auth", () => auth.close());

    const loaded = digestConfigs(paths.config, paths.daemonConfig, Date.now());
    const project = loadProject(paths.config, process.env, { warnings: false });
    if (!project.ok) throw new StartupError(project.errors.map((i) => formatIssue(i)));
    this.project = project.value;
    this.loadedConfig = loaded;

    const dbPath = this.daemonConfig.storage.sqlite.path ?? join(paths.dataDir, "svc.db");
    this.store = openStore({
      path: dbPath,
      busyTimeoutMs: this.daemonConfig.storage.sqlite.busyTimeoutMs,
      walAutocheckpoint: this.daemonConfig.storage.sqlite.walAutocheckpoint,
      logger: this.log, // background write and indexing failures belong in the daemon's log
    });
    const dbFile = statSync(dbPath);
    this.onUndo("store", () => {
      try {
        if (this.lost?.saveDatabase) this.saveDatabase(dbPath);
      } finally {
        this.store.close();
      }
    });

    const bus = new EventBus(this.log);
    const unsubscribe = this.store.logs.onFlushed((lines) => bus.emit("run:logs", { lines }));
    this.onUndo("log events", unsubscribe);
    // Opened before the engine starts (recovered runs are transitions too) and closed after it stops.
    const audit = openAuditLog(this.daemonConfig.log.auditLog, paths.dataDir, bus);
    if (audit) this.onUndo("audit log", () => audit.close());

    this.notifier = createNotifier({ bus, store: this.store, getProject: () => this.project, log: this.log });
    this.notifier.start();
    this.onUndo("notifier", () => this.notifier.stop());

    this.engine = new Engine({ store: this.store, bus, log: this.log, clock: systemClock, project: this.project, daemon: this.daemonConfig });
    // Before the engine starts: runs it recovers count too.
    const metrics = this.daemonConfig.metrics.enabled ? createMetrics({ bus, store: this.store, engine: this.engine, project: () => this.project, databasePath: dbPath, version: VERSION }) : null;
    if (metrics) this.onUndo("metrics", () => metrics.close());
    this.metrics = metrics;
    const summary = await this.engine.start();
    this.onUndo("engine", () => this.engine.stop({ force: false }));

    this.app = await buildApi({
      engine: this.engine,
      store: this.store,
      bus,
      notifier: this.notifier,
      metrics,
      log: this.log,
      version: VERSION,
      startedAt: this.startedAt,
      pid: process.pid,
      project: () => this.project,
      daemonConfig: () => this.daemonConfig,
      paths: { config: paths.config, daemonConfig: paths.daemonConfig, database: dbPath, dataDir: paths.dataDir, webRoot: paths.webRoot },
      reload: () => this.reload(),
      stop: (opts) => void this.stop(opts),
      configLoaded: () => this.loadedConfig,
    }, { auth });
    this.onUndo("api", () => this.app?.close());
    await this.listen();
    // Loaded lazily for a fast first answer, but before anyone needs it (a request at fd exhaustion).
    setImmediate(() => {
      try {
        preloadValidation();
      } catch (e) {
        this.log.warn({ err: toError(e) }, "could not load the request validator yet (it loads at the first request)");
      }
    });
    const stopRetention = startRetention(this.store, this.daemonConfig.storage.retention, this.log);
    if (stopRetention) this.onUndo("retention", stopRetention);
    this.watchDataDir(dbPath, dbFile);

    this.log.info(
      { version: VERSION, config: paths.config, daemon_config: paths.daemonConfig, database: dbPath, address: this.address, pid: process.pid, spawn: spawnMethod },
      `svcd ${VERSION} started: ${this.project.jobs.size} jobs, API on ${this.daemonConfig.api.tls.enabled ? "https" : "http"}://${this.address}${this.daemonConfig.api.basePath}/`,
    );
    if (summary.lost > 0 || summary.resumed > 0) this.log.info({ lost: summary.lost, resumed: summary.resumed }, "recovered runs");
    this.logNextRuns(summary.next);
  }

  /**
   * SPEC rule 1: each job's next run, in UTC with the zone abbreviation.
   * Logged a slice per event-loop turn so that the API answers meanwhile:
   * through the text formatter 10,000 lines take about a second.
   */
  private logNextRuns(next: NextRunInfo[]): void {
    let i = 0;
    const slice = (): void => {
      this.nextRunsLog = null;
      const end = Math.min(next.length, i + NEXT_RUN_LOG_SLICE);
      for (; i < end; i++) {
        const { job, slot } = next[i]!;
        const zone = this.project.jobs.get(job)?.schedule.timezone;
        if (slot) this.log.info({ job, next_run: slot.utc, zone: slot.zoneAbbr, timezone: zone }, `next run of ${job}: ${describeSlot(slot)}`);
      }
      if (i < next.length && this.stopping === null) this.nextRunsLog = setImmediate(slice);
    };
    slice();
    this.onUndo("next-run log", () => this.nextRunsLog && clearImmediate(this.nextRunsLog));
  }

  private async listen(): Promise<void> {
    const app = this.app!;
    const [host, port] = splitAddr(this.daemonConfig.api.addr);
    await app.listen({ host, port });
    const addr = app.server.address() as AddressInfo;
    this.address = `${addr.family === "IPv6" ? `[${addr.address}]` : addr.address}:${addr.port}`;
    const addrFile = join(this.paths.dataDir, "api.addr");
    const exposed = exposureWarning(addr.address, this.address, this.daemonConfig);
    if (exposed) this.log.warn({ address: this.address }, exposed);
    // The socket first: api.addr is what clients (and `svc start`) read as "ready", so whoever
    // finds api.addr also finds the socket.
    const closeSocket = await startUnixSocket(app, this.paths.dataDir, this.daemonConfig.api.timeouts, this.log);
    if (closeSocket) this.onUndo("unix socket", closeSocket);

    writeFileSync(`${addrFile}.tmp`, `${this.address}\n`, { mode: 0o600 });
    renameSync(`${addrFile}.tmp`, addrFile);
    this.onUndo("api.addr", () => rmSync(addrFile, { force: true }));
  }

  /**
   * A data directory (or database file) removed under the running daemon
   * would take every later write with it: SQLite keeps writing to the
   * unlinked file, which is gone when the daemon exits. So the daemon
   * checks every 2 s, and when the database file or the PID lock is gone it
   * says so, stops (draining running jobs as a graceful stop does), writes
   * the open database back to its path, and starts again
   * (`restartRequested`): nothing recorded is lost and the daemon serves on.
   */
  private watchDataDir(dbPath: string, opened: { dev: number; ino: number }): void {
    const pidFile = join(this.paths.dataDir, "svcd.pid");
    const timer = setInterval(() => {
      let problem: string | null = null;
      let saveDatabase = false;
      try {
        const now = statSync(dbPath);
        if (now.dev !== opened.dev || now.ino !== opened.ino) {
          problem = `the database file ${dbPath} was replaced`;
          saveDatabase = true;
        }
      } catch {
        problem = `the database file ${dbPath} was removed`;
        saveDatabase = true;
      }
      if (!existsSync(pidFile)) problem ??= `the PID lock ${pidFile} was removed`;
      if (problem === null || this.stopping) return;
      clearInterval(timer);
      const dirGone = !existsSync(this.paths.dataDir);
      this.log.error(
        { data_dir: this.paths.dataDir, database: dbPath },
        `${dirGone ? `the data directory ${this.paths.dataDir} was removed (${problem})` : problem} while svcd was running: ` +
          `stopping, writing the open database back${saveDatabase ? "" : " (not needed)"} and starting again`,
      );
      this.lost = { saveDatabase };
      void this.stop({ force: false });
    }, DATA_DIR_CHECK_MS);
    timer.unref();
    this.onUndo("data dir watch", () => clearInterval(timer));
  }

  /** Writes the open (possibly unlinked) database back to its path, recreating the directories. */
  private saveDatabase(dbPath: string): void {
    try {
      mkdirSync(this.paths.dataDir, { recursive: true, mode: 0o700 });
      mkdirSync(dirname(dbPath), { recursive: true, mode: 0o700 });
      this.store.saveCopy(dbPath);
      this.log.info({ database: dbPath }, `the database was written back to ${dbPath}`);
    } catch (e) {
      this.lost = null; // nothing to start again from
      this.log.error({ err: toError(e), database: dbPath }, `could not write the database back to ${dbPath}: what was recorded since it was removed is lost`);
    }
  }

  /** True once the daemon stopped because its data directory was removed and should be started again. */
  get restartRequested(): boolean {
    return this.lost !== null;
  }

  /**
   * SIGHUP / POST /api/daemon/reload (SPEC rule 10): parse and cycle-check
   * both files first; on any error keep the old config and log every error.
   */
  async reload(): Promise<ReloadResult> {
    const loaded = digestConfigs(this.paths.config, this.paths.daemonConfig, Date.now());
    const project = loadProject(this.paths.config, process.env, { warnings: false });
    const daemon = loadDaemonConfig(this.paths.daemonConfig);
    const errors = [...(project.ok ? [] : project.errors), ...(daemon.ok ? [] : daemon.errors)];
    this.metrics?.reloaded(project.ok && daemon.ok);
    if (!project.ok || !daemon.ok) {
      for (const e of errors) this.log.error({ file: e.file, line: e.line, path: e.path }, `reload rejected: ${formatIssue(e)}`);
      this.log.warn(`reload rejected (${errors.length} error${errors.length === 1 ? "" : "s"}): the previous config stays in effect`);
      return { ok: false, errors };
    }
    this.project = project.value;
    this.loadedConfig = loaded;
    this.engine.reload(project.value);
    this.notifier.syncIntegrations(project.value);
    this.applyDaemonConfig(daemon.value);
    this.log.info({ jobs: project.value.jobs.size }, "config reloaded");
    return { ok: true, jobs: project.value.jobs.size };
  }

  /** svcd.yaml on reload: log level and auth apply at once; the rest needs a restart. */
  private applyDaemonConfig(next: DaemonConfig): void {
    const restartOnly = (["api", "storage", "scheduler", "executor", "metrics"] as const).filter(
      (k) => JSON.stringify(next[k]) !== JSON.stringify(this.daemonConfig[k]),
    );
    if (restartOnly.length > 0) {
      this.log.warn({ sections: restartOnly }, `svcd.yaml: changes to ${restartOnly.join(", ")} take effect at the next restart`);
    }
    // Auth swaps whole or not at all: an unusable token file keeps the previous tokens.
    const authNow = this.auth?.configure(next.auth) ?? { ok: true };
    if (!authNow.ok) this.log.error(`reload: ${authNow.error}; the previous auth settings stay in effect`);
    const logRestart = ["format", "output", "file", "auditLog"].filter(
      (k) => JSON.stringify(next.log[k as keyof DaemonConfig["log"]]) !== JSON.stringify(this.daemonConfig.log[k as keyof DaemonConfig["log"]]),
    );
    if (logRestart.length > 0) this.log.warn(`svcd.yaml: changes to log (other than log.level) take effect at the next restart`);
    this.daemonConfig = { ...this.daemonConfig, auth: authNow.ok ? next.auth : this.daemonConfig.auth, log: next.log };
    (this.log as unknown as { level: string }).level = next.log.level;
  }

  /** Graceful or forced stop; safe to call twice (a second forced call escalates). */
  stop(opts: { force: boolean }): Promise<void> {
    if (this.stopping) {
      if (opts.force) void this.engine?.stop({ force: true });
      return this.stopping;
    }
    this.stopping = (async () => {
      this.log?.info({ force: opts.force }, opts.force ? "forced stop: killing running jobs" : "stopping: draining running jobs");
      await this.engine?.stop(opts);
      await this.runUndo();
      this.resolveDone();
    })();
    return this.stopping;
  }

  private async runUndo(): Promise<void> {
    while (this.undo.length > 0) {
      const part = this.undo.pop()!;
      try {
        await part.fn();
      } catch (e) {
        this.log?.error({ err: toError(e), part: part.name }, "error while stopping");
      }
    }
  }

  get logger(): Logger {
    return this.log;
  }
}

function splitAddr(addr: string | null): [string, number] {
  if (!addr) return ["127.0.0.1", 0];
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(addr);
  if (!m) return [addr, 0];
  return [m[1] || "127.0.0.1", Number(m[2])];
}
