import type { DaemonConfig } from "../config/types.js";
import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";
import type { Store } from "../store/api.js";

/** The first pass, after startup (or after one `storage.retention.interval`, if shorter). */
const FIRST_DELAY_MS = 30_000;

/**
 * SPEC rule 12: a vacuum shortly after startup, then every `storage.retention.interval` (24 h by default), logged at
 * INFO. vacuumAsync deletes in batches and yields between them, so a big
 * prune never stalls the tick. Returns how to stop it (null: no retention set).
 */
export function startRetention(store: Store, retention: DaemonConfig["storage"]["retention"], log: Logger): (() => void) | null {
  const { maxAgeMs, maxRunsPerJob, intervalMs } = retention;
  if (maxAgeMs === null && maxRunsPerJob === null) return null;
  let stopped = false;
  let timer: NodeJS.Timeout;
  const run = async () => {
    try {
      const r = await store.vacuumAsync({ maxAgeMs, maxRunsPerJob }, Date.now());
      log.info({ ...r }, `retention: pruned ${r.runsByAge} runs by age and ${r.runsByCap} by the per-job cap`);
    } catch (e) {
      log.error({ err: toError(e) }, "retention failed");
    }
    if (!stopped) timer = setTimeout(() => void run(), intervalMs).unref();
  };
  timer = setTimeout(() => void run(), Math.min(FIRST_DELAY_MS, intervalMs)).unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
