import { frequencyLabel } from "../../config/views.js";
import type { BuildInput, HttpDelivery } from "./types.js";

/** `{event, job, run, message, logs?}` (CONTRACT §6). */
export function buildWebhook(input: BuildInput): HttpDelivery {
  const { job, run } = input;
  const body: Record<string, unknown> = {
    event: input.event,
    job: {
      name: job.name,
      description: job.description,
      tags: job.tags,
      frequency: frequencyLabel(job),
    },
    run: {
      id: run.id,
      job_name: run.job_name,
      status: run.status,
      attempt: run.attempt,
      trigger: run.trigger,
      triggered_by: run.triggered_by,
      reason: run.reason,
      cycle_id: run.cycle_id,
      created_at: run.created_at,
      started_at: run.started_at,
      finished_at: run.finished_at,
      duration_ms: run.duration_ms,
      exit_code: run.exit_code,
      sla_breached: run.sla_breached,
      hc_status: run.hc_status,
      error: run.error,
    },
    message: input.message,
  };
  if (input.logs) {
    body.logs = input.logs.map((l) => ({ seq: l.seq, ts: l.ts, stream: l.stream, line: l.line }));
  }
  const direct = input.channel.target !== "";
  return {
    v: 1,
    provider: "webhook",
    integration: direct ? null : input.channel.integration,
    url: direct ? input.channel.target : null,
    body,
  };
}
