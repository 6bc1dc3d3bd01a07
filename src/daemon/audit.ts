import { join } from "node:path";
import type { RotatingFileStream } from "rotating-file-stream";
import type { DaemonConfig } from "../config/types.js";
import type { EventBus } from "../engine/events.js";
import type { RunRecord, RunStatus } from "../store/types.js";
import { rotatingFile } from "./logging.js";

export interface AuditLog {
  /** Flushes and closes the file; later transitions are not written. */
  close(): Promise<void>;
}

/** One line of the audit log (newline-delimited JSON). */
export interface AuditEntry {
  ts: string;
  event: "run_status";
  job: string;
  run_id: number;
  cycle_id: string;
  attempt: number;
  status: RunStatus;
  /** The previous status; null when the run was created. */
  from: RunStatus | null;
  trigger: RunRecord["trigger"];
  triggered_by: string;
  reason: string | null;
  duration_ms: number | null;
  exit_code: number | null;
}

/**
 * `log.audit_log` (SPEC Events rule 5): every run state transition the
 * engine commits (`run:status`, creation included) becomes one JSON line in
 * `<data>/audit.log` (or `log.audit_log.path`), rotated by size and never
 * compressed. Only run metadata is written: no command, environment or
 * output, so no secret can reach it. Null when the audit log is off.
 */
export function openAuditLog(cfg: DaemonConfig["log"]["auditLog"], dataDir: string, bus: EventBus, now: () => Date = () => new Date()): AuditLog | null {
  if (!cfg.enabled) return null;
  const file: RotatingFileStream = rotatingFile(cfg.path ?? join(dataDir, "audit.log"), { maxSizeMb: cfg.maxSizeMb, maxBackups: cfg.maxBackups, compress: false });
  let open = true;
  const unsubscribe = bus.on("run:status", ({ run, from }) => {
    if (open) file.write(`${JSON.stringify(auditEntry(run, from, now()))}\n`);
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        if (!open) return resolve();
        open = false;
        unsubscribe();
        file.end(() => resolve());
      }),
  };
}

export function auditEntry(run: RunRecord, from: RunStatus | null, at: Date): AuditEntry {
  return {
    ts: at.toISOString(),
    event: "run_status",
    job: run.job_name,
    run_id: run.id,
    cycle_id: run.cycle_id,
    attempt: run.attempt,
    status: run.status,
    from,
    trigger: run.trigger,
    triggered_by: run.triggered_by,
    reason: run.reason,
    duration_ms: run.duration_ms,
    exit_code: run.exit_code,
  };
}
