import type { ConfigIssue, DaemonConfig, ProjectConfig } from "../config/types.js";
import type { Engine } from "../engine/engine.js";
import type { EventBus } from "../engine/events.js";
import type { Notifier } from "../notify/notifier.js";
import type { Logger } from "../shared/logger.js";
import type { Metrics } from "./metrics.js";
import type { ReadStore } from "../store/api.js";

export type ReloadResult = { ok: true; jobs: number } | { ok: false; errors: ConfigIssue[] };

/**
 * What the daemon loaded, for `svc status`'s "changed on disk" warning: the
 * SHA-256 of each file at the last successful load (start or reload).
 */
export interface LoadedConfig {
  /** Epoch ms of the last successful load. */
  at: number;
  /** SHA-256 (hex) of svc.yaml as read then; null when it could not be read. */
  svcSha256: string | null;
  /** SHA-256 (hex) of svcd.yaml, or null without one. */
  svcdSha256: string | null;
}

/** Everything the API needs from the daemon; one object, passed once (STYLE). */
export interface ApiDeps {
  engine: Engine;
  store: ReadStore;
  bus: EventBus;
  notifier: Notifier;
  /** The Prometheus collector (GET /metrics), or null with `metrics.enabled: false`. */
  metrics: Metrics | null;
  log: Logger;
  /** Package version, for /api/status and /api/daemon/info. */
  version: string;
  /** Epoch ms when the daemon started. */
  startedAt: number;
  pid: number;
  /** The current project config (changes on reload). */
  project(): ProjectConfig;
  /** The current daemon config. */
  daemonConfig(): DaemonConfig;
  paths: {
    /** svc.yaml. */
    config: string;
    /** svcd.yaml, or null when there is none. */
    daemonConfig: string | null;
    database: string;
    dataDir: string;
    /** The dashboard build (dist/web). */
    webRoot: string;
  };
  /** Re-reads both files, cycle-checks, swaps (SPEC rule 10). */
  reload(): Promise<ReloadResult>;
  /** Begins shutdown; the API calls it after the response is sent. */
  stop(opts: { force: boolean }): void;
  /** Digests of the config files as last loaded (absent in API-only tests: then reported as null). */
  configLoaded?(): LoadedConfig;
}
