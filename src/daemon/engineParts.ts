import { createMetrics, type Metrics } from "../api/index.js";
import type { DaemonConfig, ProjectConfig } from "../config/types.js";
import { Engine, type StartSummary } from "../engine/engine.js";
import { EventBus } from "../engine/events.js";
import { createNotifier, type Notifier } from "../notify/index.js";
import { systemClock } from "../shared/clock.js";
import type { Logger } from "../shared/logger.js";
import type { Store } from "../store/index.js";
import { VERSION } from "../shared/version.js";
import { openAuditLog } from "./audit.js";
import { startGroup } from "./parts.js";

export interface EngineParts {
  bus: EventBus;
  engine: Engine;
  notifier: Notifier;
  /** The Prometheus collector, or null with `metrics.enabled: false`. */
  metrics: Metrics | null;
  /** What the engine's start recovered and each job's next slot. */
  summary: StartSummary;
  /** Stops the engine (draining as a graceful stop does), then what feeds on its events. */
  undo: () => Promise<void>;
}

/**
 * The engine and the parts that hear its events: the event bus, the audit
 * log, the notifier and the metrics. Each listens before the engine starts,
 * since the runs it recovers at start are transitions too, and stops after
 * it. A part that fails to start undoes the ones started before it.
 */
export function startEngine(deps: {
  store: Store;
  daemonConfig: DaemonConfig;
  /** The current project config (changes on reload); the engine starts with its value now. */
  project: () => ProjectConfig;
  dataDir: string;
  databasePath: string;
  log: Logger;
}): Promise<EngineParts> {
  const { store, daemonConfig, project, log } = deps;
  return startGroup(() => log, async (parts) => {
    const bus = new EventBus(log);
    parts.add("log events", store.logs.onFlushed((lines) => bus.emit("run:logs", { lines })));
    const audit = openAuditLog(daemonConfig.log.auditLog, deps.dataDir, bus);
    parts.add("audit log", audit && (() => audit.close()));

    const notifier = createNotifier({ bus, store, getProject: project, log });
    notifier.start();
    parts.add("notifier", () => notifier.stop());

    const engine = new Engine({ store, bus, log, clock: systemClock, project: project(), daemon: daemonConfig });
    const metrics = daemonConfig.metrics.enabled
      ? createMetrics({ bus, store, engine, project, databasePath: deps.databasePath, version: VERSION })
      : null;
    parts.add("metrics", metrics && (() => metrics.close()));
    const summary = await engine.start();
    parts.add("engine", () => engine.stop({ force: false }));
    return { bus, engine, notifier, metrics, summary };
  });
}
