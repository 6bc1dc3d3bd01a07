import type { JobConfig, NotifyEntry } from "../config/types.js";
import type { EngineEvents } from "../engine/events.js";

export type NotifyPayload = EngineEvents["run:notify"];

/**
 * The entries that fire for one event (SPEC "Events"):
 * - on_sla_breach without entries falls back to on_failure when the engine
 *   says so (`fallbackToFailure`);
 * - an on_success entry with only_after_failure fires only when the job's
 *   previous completed run was FAILED.
 */
export function entriesFor(notify: JobConfig["notify"], ev: NotifyPayload): NotifyEntry[] {
  let entries = notify[ev.event] ?? [];
  if (ev.event === "on_sla_breach" && entries.length === 0 && ev.fallbackToFailure) {
    entries = notify.on_failure ?? [];
  }
  if (ev.event === "on_success") {
    entries = entries.filter((e) => !e.onlyAfterFailure || ev.previousStatus === "FAILED");
  }
  return entries;
}
