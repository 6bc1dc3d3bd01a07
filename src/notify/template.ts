import type { JobConfig, NotifyEvent } from "../config/types.js";
import { humanDuration } from "../config/duration.js";
import { frequencyLabel } from "../config/views.js";
import type { RunRecord } from "../store/types.js";

/** CONTRACT §6: used when an entry has no `message`. */
export const DEFAULT_MESSAGE =
  "svc: job {{ job.name }} {{ run.status }} (run {{ run.id }}, attempt {{ run.attempt }}, exit {{ run.exit_code }})";

/** The variables a message template may use (CONTRACT §6), in documentation order. */
export const TEMPLATE_VARIABLES = [
  "job.name",
  "job.description",
  "job.tags",
  "job.frequency",
  "run.id",
  "run.status",
  "run.attempt",
  "run.trigger",
  "run.triggered_by",
  "run.reason",
  "run.exit_code",
  "run.started_at",
  "run.finished_at",
  "run.duration",
  "run.cycle_id",
  "run.sla_breached",
  "run.hc_status",
  "run.error",
  "event",
] as const;

// `{{` then anything without braces then `}}`; the inside is trimmed and looked
// up as a flat key. Nothing is ever evaluated.
const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;

/**
 * Renders `{{ name }}` placeholders from a flat map (`"job.name"` -> value).
 * Unknown names render empty and are reported through `onUnknown`; values are
 * inserted as plain text (no HTML escaping). Never throws.
 */
export function renderTemplate(
  template: string,
  vars: Record<string, unknown>,
  onUnknown?: (name: string) => void,
): string {
  return template.replace(PLACEHOLDER, (_whole, inner: string) => {
    const name = inner.trim();
    if (!Object.prototype.hasOwnProperty.call(vars, name)) {
      try {
        onUnknown?.(name);
      } catch {
        // A failing warning hook must not break rendering.
      }
      return "";
    }
    return stringify(vars[name]);
  });
}

function stringify(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return String(v);
  if (Array.isArray(v)) return v.map(stringify).join(", ");
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return "";
  }
}

/** Notification texts show durations for people ("1m 5s"); the one formatter is config/duration.ts's. */
export const formatDuration = humanDuration;

/** The run's duration: the stored duration_ms, else finished - started. */
export function runDurationMs(run: RunRecord): number | null {
  if (run.duration_ms !== null) return run.duration_ms;
  if (run.started_at && run.finished_at) {
    const d = Date.parse(run.finished_at) - Date.parse(run.started_at);
    return Number.isFinite(d) ? d : null;
  }
  return null;
}

/** The variable map for `renderTemplate` (CONTRACT §6 list). */
export function templateVars(
  job: Pick<JobConfig, "name" | "description" | "tags" | "schedule" | "after" | "dependsOn">,
  run: RunRecord,
  event: NotifyEvent | string,
): Record<string, string> {
  return {
    "job.name": job.name,
    "job.description": job.description ?? "",
    "job.tags": job.tags.join(", "),
    "job.frequency": frequencyLabel(job),
    "run.id": String(run.id),
    "run.status": run.status,
    "run.attempt": String(run.attempt),
    "run.trigger": run.trigger,
    "run.triggered_by": run.triggered_by,
    "run.reason": run.reason ?? "",
    // A run ended by a signal (timeout, cancel) has no exit code; "none" reads
    // better than an empty gap in the default message.
    "run.exit_code": run.exit_code === null ? "none" : String(run.exit_code),
    "run.started_at": run.started_at ?? "",
    "run.finished_at": run.finished_at ?? "",
    "run.duration": formatDuration(runDurationMs(run)),
    "run.cycle_id": run.cycle_id,
    "run.sla_breached": String(run.sla_breached),
    "run.hc_status": run.hc_status ?? "",
    "run.error": run.error ?? "",
    event,
  };
}
