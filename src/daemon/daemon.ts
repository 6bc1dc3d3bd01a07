import { chmodSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DOWNLOAD_PREFIX, type Authenticator, type Metrics, type ReloadResult } from "../api/index.js";
import { findDaemonConfig, formatIssue, loadDaemonConfig, loadProject } from "../config/index.js";
import type { DaemonConfig, ProjectConfig } from "../config/types.js";
import type { Engine } from "../engine/engine.js";
import { spawnMethod } from "../executor/index.js";
import type { Notifier } from "../notify/index.js";
import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";
import { describeStorageError } from "../store/index.js";
import { VERSION } from "../shared/version.js";
import { startApi, startAuth } from "./apiServer.js";
import { digestConfigs, type LoadedConfig } from "./configDigest.js";
import { openDatabase } from "./database.js";
import { watchDataDir } from "./dataDirWatch.js";
import { startEngine } from "./engineParts.js";
import { createDaemonLog } from "./logging.js";
import { logNextRuns } from "./nextRunLog.js";
import { Parts } from "./parts.js";
import { acquirePidLock } from "./pidLock.js";
import { startupProblem } from "./preflight.js";
import { startRetention } from "./retentionTimer.js";
import { StartupError } from "./startupError.js";
import { warmUp } from "./warmUp.js";

export { StartupError } from "./startupError.js";

export interface DaemonPaths {
  config: string;
  dataDir: string;
  daemonConfig: string | null;
  webRoot: string;
}

/**
 * svcd: one daemon for one project, made of parts (the logger, the PID lock,
 * auth, the database, the engine with what hears its events, the API, the
 * retention timer, the data directory watch), each started by a function
 * that returns its undo. Start records each part it started so that a failed
 * start undoes exactly those, last first, and stop is safe to call twice
 * (STYLE: Dagu's Start/stopOnce).
 */
export class Daemon {
  private readonly parts = new Parts(() => this.log);
  private stopping: Promise<void> | null = null;
  private log!: Logger;
  private engine: Engine | null = null;
  private notifier!: Notifier;
  private metrics: Metrics | null = null;
  private auth: Authenticator | null = null;
  private project!: ProjectConfig;
  private daemonConfig!: DaemonConfig;
  /** The files as the API shows them (GET /api/daemon/info, the config views); a reload may find svcd.yaml. */
  private apiPaths: { config: string; daemonConfig: string | null; database: string; dataDir: string; webRoot: string } | null = null;
  private readonly startedAt = Date.now();
  private loadedConfig!: LoadedConfig;
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
      await this.parts.undo();
      if (e instanceof StartupError) throw e;
      throw new StartupError([toError(e).message]);
    }
  }

  private async startParts(): Promise<void> {
    const { paths, parts } = this;
    mkdirSync(paths.dataDir, { recursive: true, mode: 0o700 });
    chmodSync(paths.dataDir, 0o700);

    const daemonCfg = loadDaemonConfig(paths.daemonConfig);
    if (!daemonCfg.ok) throw new StartupError(daemonCfg.errors.map((i) => formatIssue(i)));
    this.daemonConfig = daemonCfg.value;
    const problem = startupProblem(this.daemonConfig);
    if (problem) throw new StartupError([problem]);

    const daemonLog = createDaemonLog(this.daemonConfig.log, paths.dataDir);
    this.log = daemonLog.logger;
    parts.add("logger", () => daemonLog.close());

    const lock = acquirePidLock(join(paths.dataDir, "svcd.pid"), this.log);
    parts.add("pid lock", () => lock.release());
    removeStaleDownloads(paths.dataDir, this.log);
    for (const w of daemonCfg.warnings) this.log.warn({ file: w.file, line: w.line, path: w.path }, formatIssue(w));

    const auth = await startAuth(this.daemonConfig.auth, this.log);
    this.auth = auth.auth;
    parts.add("auth", auth.undo);

    const loaded = digestConfigs(paths.config, paths.daemonConfig, Date.now());
    const project = loadProject(paths.config, process.env, { warnings: false });
    if (!project.ok) throw new StartupError(project.errors.map((i) => formatIssue(i)));
    this.project = project.value;
    this.loadedConfig = loaded;

    const db = openDatabase(this.daemonConfig.storage.sqlite, paths.dataDir, this.log, {
      wanted: () => this.lost?.saveDatabase === true,
      failed: () => (this.lost = null), // nothing to start again from
    });
    parts.add("database", db.undo);

    this.apiPaths = { config: paths.config, daemonConfig: paths.daemonConfig, database: db.path, dataDir: paths.dataDir, webRoot: paths.webRoot };
    const core = await startEngine({ store: db.store, daemonConfig: this.daemonConfig, project: () => this.project, dataDir: paths.dataDir, databasePath: db.path, log: this.log });
    parts.add("engine", core.undo);
    this.engine = core.engine;
    this.notifier = core.notifier;
    this.metrics = core.metrics;
    // Invisible warm-up of the dispatch path, alongside the first ticks (a few ms; why and figures: warmUp.ts).
    const warming = warmUp({ store: db.store, daemonConfig: this.daemonConfig, cwd: paths.dataDir, log: this.log });
    parts.add("warm-up", () => warming);

    const api = await startApi(
      {
        engine: core.engine,
        store: db.store,
        bus: core.bus,
        notifier: core.notifier,
        metrics: core.metrics,
        log: this.log,
        version: VERSION,
        startedAt: this.startedAt,
        pid: process.pid,
        project: () => this.project,
        daemonConfig: () => this.daemonConfig,
        paths: this.apiPaths,
        reload: () => this.reload(),
        stop: (opts) => void this.stop(opts),
        configLoaded: () => this.loadedConfig,
      },
      auth.auth,
    );
    parts.add("api", api.undo);
    this.address = api.address;

    parts.add("retention", startRetention(db.store, this.daemonConfig.storage.retention, this.log));
    parts.add(
      "data dir watch",
      watchDataDir(paths.dataDir, db, this.log, {
        stopping: () => this.stopping !== null,
        lost: (how) => {
          this.lost = how;
          void this.stop({ force: false });
        },
      }),
    );

    this.log.info(
      { version: VERSION, config: paths.config, daemon_config: paths.daemonConfig, database: db.path, address: this.address, pid: process.pid, spawn: spawnMethod },
      `svcd ${VERSION} started: ${this.project.jobs.size} jobs, API on ${this.daemonConfig.api.tls.enabled ? "https" : "http"}://${this.address}${this.daemonConfig.api.basePath}/`,
    );
    const { summary } = core;
    if (summary.lost > 0 || summary.resumed > 0) this.log.info({ lost: summary.lost, resumed: summary.resumed }, "recovered runs");
    parts.add("next-run log", logNextRuns(summary.next, this.project, this.log, () => this.stopping !== null));
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
    // A svcd.yaml written beside svc.yaml after startup is read from now on (SPEC: it is loaded
    // from svc.yaml's directory when it exists); before, every reload read the defaults again.
    if (this.paths.daemonConfig === null) {
      const found = findDaemonConfig(this.paths.config);
      if (found !== null) {
        this.paths.daemonConfig = found;
        if (this.apiPaths) this.apiPaths.daemonConfig = found;
        this.log.info({ file: found }, "svcd.yaml found beside svc.yaml: read from this reload on");
      }
    }
    const loaded = digestConfigs(this.paths.config, this.paths.daemonConfig, Date.now());
    const project = loadProject(this.paths.config, process.env, { warnings: false });
    const daemon = loadDaemonConfig(this.paths.daemonConfig);
    const errors = [...(project.ok ? [] : project.errors), ...(daemon.ok ? [] : daemon.errors)];
    if (!project.ok || !daemon.ok) {
      this.metrics?.reloaded(false);
      for (const e of errors) this.log.error({ file: e.file, line: e.line, path: e.path }, `reload rejected: ${formatIssue(e)}`);
      this.log.warn(`reload rejected (${errors.length} error${errors.length === 1 ? "" : "s"}): the previous config stays in effect`);
      return { ok: false, errors };
    }
    // svcd.yaml's auth, read and checked before anything applies: a token file that cannot be used (a
    // line in the wrong form, no token left) rejects the whole reload, and the previous tokens stay.
    const auth = this.auth?.prepare(daemon.value.auth) ?? { ok: true as const, apply() {} };
    if (!auth.ok) {
      this.metrics?.reloaded(false);
      const issue = { file: this.paths.daemonConfig ?? this.paths.config, line: 0, column: 0, path: "auth", message: `${auth.error}; the previous config (auth included) stays in effect` };
      this.log.error(`reload rejected: ${auth.error}; the previous config stays in effect`);
      return { ok: false, errors: [issue] };
    }
    // The new project before the engine's `config:reloaded`: its listeners (metrics dropping a removed
    // job's series, the notifier's integration rows) read it through project().
    const previous = this.project;
    this.project = project.value;
    try {
      this.engine!.reload(project.value);
    } catch (e) {
      // The config is valid but its schedule could not be stored: nothing of it took effect.
      this.project = previous;
      this.metrics?.reloaded(false);
      const err = toError(e);
      const why = describeStorageError(err) ?? `internal error: ${err.message}`;
      this.log.error({ err }, `reload failed: ${why}; the previous config stays in effect`);
      return { ok: false, errors: [{ file: this.paths.config, line: 0, column: 0, path: "", message: `the new config could not be applied (${why}); the previous config stays in effect` }] };
    }
    this.metrics?.reloaded(true);
    this.loadedConfig = loaded;
    this.applyDaemonConfig(daemon.value, auth.apply);
    this.log.info({ jobs: project.value.jobs.size }, "config reloaded");
    return { ok: true, jobs: project.value.jobs.size };
  }

  /** svcd.yaml on reload: log level and auth apply at once; the rest needs a restart. */
  private applyDaemonConfig(next: DaemonConfig, applyAuth: () => void): void {
    const restartOnly = (["api", "storage", "scheduler", "executor", "metrics"] as const).filter(
      (k) => JSON.stringify(next[k]) !== JSON.stringify(this.daemonConfig[k]),
    );
    if (restartOnly.length > 0) {
      this.log.warn({ sections: restartOnly }, `svcd.yaml: changes to ${restartOnly.join(", ")} take effect at the next restart`);
    }
    // Auth swaps whole (checked by reload before anything applied).
    applyAuth();
    const logRestart = ["format", "output", "file", "auditLog"].filter(
      (k) => JSON.stringify(next.log[k as keyof DaemonConfig["log"]]) !== JSON.stringify(this.daemonConfig.log[k as keyof DaemonConfig["log"]]),
    );
    if (logRestart.length > 0) this.log.warn(`svcd.yaml: changes to log (other than log.level) take effect at the next restart`);
    this.daemonConfig = { ...this.daemonConfig, auth: next.auth, log: next.log };
    (this.log as unknown as { level: string }).level = next.log.level;
  }

  /**
   * Graceful or forced stop; safe to call twice (a second forced call escalates).
   * The engine drains first, with the API still answering; then every part is undone, last first.
   */
  stop(opts: { force: boolean }): Promise<void> {
    if (this.stopping) {
      if (opts.force) void this.engine?.stop({ force: true });
      return this.stopping;
    }
    this.stopping = (async () => {
      this.log?.info({ force: opts.force }, opts.force ? "forced stop: killing running jobs" : "stopping: draining running jobs");
      await this.engine?.stop(opts);
      await this.parts.undo();
      this.resolveDone();
    })();
    return this.stopping;
  }

  get logger(): Logger {
    return this.log;
  }
}

/**
 * The copies of the database a download (`POST /api/db/backup` without a body) writes to the data
 * directory are removed once sent; a daemon killed meanwhile left them, job output and all. With
 * the PID lock held no other daemon uses the directory, so every one there now is stale.
 */
function removeStaleDownloads(dataDir: string, log: Logger): void {
  const stale = readdirSync(dataDir).filter((f) => f.startsWith(DOWNLOAD_PREFIX));
  for (const f of stale) rmSync(join(dataDir, f), { force: true });
  if (stale.length > 0) log.info({ files: stale }, `removed ${stale.length} file(s) left by a backup download the daemon did not finish`);
}
