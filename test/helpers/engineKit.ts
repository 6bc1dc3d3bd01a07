import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach } from "vitest";
import { loadProject, parseDaemonText } from "../../src/config/index.js";
import type { DaemonConfig, ProjectConfig } from "../../src/config/types.js";
import { Engine } from "../../src/engine/engine.js";
import { EventBus, type EngineEvents } from "../../src/engine/events.js";
import { systemClock, type Clock } from "../../src/shared/clock.js";
import { memoryLogger } from "../../src/shared/logger.js";
import { openStore } from "../../src/store/index.js";
import type { Store } from "../../src/store/api.js";
import type { RunRecord, RunStatus } from "../../src/store/types.js";
import { until } from "./until.js";

export interface KitOptions {
  /** svcd.yaml text. */
  daemon?: string;
  /** Extra files in the project directory (path -> content). */
  files?: Record<string, string>;
  clock?: Clock;
  random?: () => number;
  /** Reuse a project directory (restart tests). */
  dir?: string;
  start?: boolean;
}

export type Kit = Awaited<ReturnType<typeof engineKit>>;

/** Loads svc.yaml text from a temp project through the real loader; throws with every error. */
export function writeProject(dir: string, yaml: string, files: Record<string, string> = {}): ProjectConfig {
  mkdirSync(dir, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content, { mode: 0o755 });
  }
  writeFileSync(join(dir, "svc.yaml"), yaml);
  const loaded = loadProject(join(dir, "svc.yaml"));
  if (!loaded.ok) throw new Error(loaded.errors.map((e) => `${e.line}:${e.column} ${e.path} ${e.message}`).join("\n"));
  return loaded.value;
}

/**
 * A real engine on a real SQLite file and real subprocesses, in a temp
 * project directory. Only the clock (optionally) and the logger are fakes.
 */
export async function engineKit(yaml: string, opts: KitOptions = {}) {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "svc-engine-"));
  const project = writeProject(dir, yaml, opts.files);
  const parsed = parseDaemonText(opts.daemon ?? "", join(dir, "svcd.yaml"));
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join("\n"));
  const daemon: DaemonConfig = parsed.value;
  const log = memoryLogger();
  const store: Store = openStore({ path: join(dir, ".svc", "svc.db"), busyTimeoutMs: 5000, walAutocheckpoint: 1000 });
  const bus = new EventBus(log);
  store.logs.onFlushed((lines) => bus.emit("run:logs", { lines }));
  const notes: EngineEvents["run:notify"][] = [];
  const transitions: { id: number; job: string; from: RunStatus | null; to: RunStatus }[] = [];
  bus.on("run:notify", (n) => notes.push(n));
  bus.on("run:status", ({ run, from }) => transitions.push({ id: run.id, job: run.job_name, from, to: run.status }));
  const clock = opts.clock ?? systemClock;
  const engine = new Engine({ store, bus, log, clock, project, daemon, random: opts.random });
  if (opts.start !== false) await engine.start();

  const kit = {
    dir,
    engine,
    store,
    bus,
    log,
    notes,
    transitions,
    clock,
    /** Polls until `pred` holds (real time), failing after `ms`. */
    waitFor<T>(what: string, pred: () => T | null | undefined | false, ms = 10_000): Promise<T> {
      return until(what, pred, ms, 20);
    },
    /** Waits until the run is in one of `statuses`. */
    async waitRun(id: number, statuses: RunStatus[], ms = 10_000): Promise<RunRecord> {
      return kit.waitFor(`run ${id} to be ${statuses.join("|")}`, () => {
        const r = store.runs.get(id);
        return r && statuses.includes(r.status) ? r : null;
      }, ms);
    },
    /** The run's log lines (flushed first). */
    lines(id: number, streams?: ("stdout" | "stderr" | "healthcheck")[]): string[] {
      store.logs.flush();
      return store.logs.forRun(id, { limit: 10_000, offset: 0, streams }).lines.map((l) => l.line);
    },
    statusesOf(id: number): RunStatus[] {
      return transitions.filter((t) => t.id === id).map((t) => t.to);
    },
    runsOf(job: string): RunRecord[] {
      return store.runs.recent(job, 1000).reverse();
    },
    reloadYaml(text: string): ProjectConfig {
      const p = writeProject(dir, text);
      engine.reload(p);
      return p;
    },
    async close(opts: { keepDir?: boolean } = {}): Promise<void> {
      await engine.stop({ force: true });
      store.close();
      if (!opts.keepDir) rmSync(dir, { recursive: true, force: true });
    },
  };
  return kit;
}

/** Starts an engineKit that afterEach closes; `stop` closes one now, for a restart on its `dir`. */
export interface KitStarter {
  (yaml: string, opts?: KitOptions): Promise<Kit>;
  /** Closes `kit` now and keeps its directory, so that the next start on `kit.dir` is a restart. */
  stop(kit: Kit): Promise<void>;
}

/**
 * The engines of one test file: each kit it starts is closed after each test,
 * and each temp directory it made for one (`prefix` + random; none when
 * `opts.dir` is given) is removed after its kits are closed.
 */
export function engineKits(prefix = "svc-engine-"): KitStarter {
  const open = new Set<Kit>();
  const dirs: string[] = [];
  afterEach(async () => {
    for (const k of open) await k.close({ keepDir: true });
    open.clear();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const start = async (yaml: string, opts: KitOptions = {}): Promise<Kit> => {
    let dir = opts.dir;
    if (dir === undefined) {
      dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
    }
    const kit = await engineKit(yaml, { ...opts, dir });
    open.add(kit);
    return kit;
  };
  return Object.assign(start, {
    async stop(kit: Kit): Promise<void> {
      open.delete(kit);
      await kit.close({ keepDir: true });
    },
  });
}
