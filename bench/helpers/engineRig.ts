/**
 * In-process engines for benchmarks: the real Engine on a real SQLite file in
 * a temp directory, real subprocesses, and a clock the benchmark controls.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadProject, parseDaemonText } from "../../src/config/index.js";
import { Engine } from "../../src/engine/engine.js";
import { EventBus } from "../../src/engine/events.js";
import type { Clock, TimerHandle } from "../../src/shared/clock.js";
import { memoryLogger } from "../../src/shared/logger.js";
import { openStore } from "../../src/store/index.js";
import type { Store } from "../../src/store/api.js";

/**
 * The system clock shifted by `offset` ms. Timers are set at absolute virtual
 * instants; the benchmark only moves the offset forward by whole seconds, so
 * the engine's ticks stay on whole virtual seconds.
 */
export class WarpClock implements Clock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  setTimer(at: number, fn: () => void): TimerHandle {
    const handle = setTimeout(fn, Math.max(0, at - this.now()));
    return { cancel: () => clearTimeout(handle) };
  }
}

/** A clock that stands still at `at` and never fires timers: for timing `engine.tick()` by hand. */
export function frozenClock(at: number): Clock & { at: number } {
  return {
    at,
    now() {
      return this.at;
    },
    setTimer: () => ({ cancel() {} }),
  };
}

export interface Rig {
  dir: string;
  engine: Engine;
  store: Store;
  bus: EventBus;
  /** Load time of svc.yaml (loadProject), ms. */
  loadMs: number;
  close(): Promise<void>;
}

/** A started engine on `yaml` (svc.yaml text) and `daemonYaml` (svcd.yaml text). */
export async function engineRig(yaml: string, daemonYaml: string, clock: Clock): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-engine-"));
  mkdirSync(join(dir, ".svc"), { recursive: true });
  writeFileSync(join(dir, "svc.yaml"), yaml);
  const t0 = performance.now();
  const loaded = loadProject(join(dir, "svc.yaml"));
  const loadMs = performance.now() - t0;
  if (!loaded.ok) throw new Error(`bench svc.yaml is invalid: ${loaded.errors.slice(0, 3).map((e) => `${e.line}: ${e.message}`).join("; ")}`);
  const daemon = parseDaemonText(daemonYaml, join(dir, "svcd.yaml"));
  if (!daemon.ok) throw new Error(`bench svcd.yaml is invalid: ${daemon.errors.map((e) => e.message).join("; ")}`);
  const log = memoryLogger();
  const store = openStore({ path: join(dir, ".svc", "svc.db"), busyTimeoutMs: 5_000, walAutocheckpoint: 1_000 });
  const bus = new EventBus(log);
  store.logs.onFlushed((lines) => bus.emit("run:logs", { lines }));
  const engine = new Engine({ store, bus, log, clock, project: loaded.value, daemon: daemon.value });
  await engine.start();
  return {
    dir,
    engine,
    store,
    bus,
    loadMs,
    async close() {
      await engine.stop({ force: true });
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const TERMINAL = new Set(["SUCCESS", "FAILED", "SKIPPED"]);

/**
 * Manual runs of job `t` kept `inFlight` at a time for `ms` through
 * `engine.runNow`; completed (SUCCESS) runs per second. Only manual runs
 * count, so a schedule or a backfill of `t` running meanwhile does not.
 */
export function engineRate(rig: Rig, inFlight: number, ms: number, via: "runNow" | "trigger" = "runNow"): Promise<number> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const end = t0 + ms;
    let done = 0;
    let running = 0;
    const submit = () => {
      running++;
      // runNow: created (and started) at once, one commit each; trigger: the API's, the runs asked in one turn in one commit.
      if (via === "runNow") rig.engine.runNow("t", { triggeredBy: "bench" });
      else void rig.engine.trigger("t", { triggeredBy: "bench" });
    };
    const off = rig.bus.on("run:status", ({ run }) => {
      if (run.job_name !== "t" || run.trigger !== "manual" || !TERMINAL.has(run.status)) return;
      running--;
      if (run.status === "SUCCESS") done++;
      if (performance.now() < end) submit();
      else if (running === 0) {
        off();
        resolve((done * 1_000) / (performance.now() - t0));
      }
    });
    for (let i = 0; i < inFlight; i++) submit();
  });
}
