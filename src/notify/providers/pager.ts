import { formatDuration, runDurationMs } from "../template.js";
import type { BuildInput, HttpDelivery } from "./types.js";

/** The provider's public events endpoint, used when the integration has no webhook_url. */
export const PAGER_EVENTS_URL = "https://events.pagerduty.com/v2/enqueue";

export const PAGER_SEVERITY = {
  p1: "critical",
  p2: "error",
  p3: "warning",
  p4: "info",
} as const;

export type PagerTarget = keyof typeof PAGER_SEVERITY;

// The events API rejects summaries longer than this.
const MAX_SUMMARY = 1024;

/**
 * `{routing_key, event_action, dedup_key, payload}` (CONTRACT §6). The stored
 * body omits `routing_key`; `withRoutingKey` adds it at send time.
 */
export function buildPager(input: BuildInput): HttpDelivery {
  const { run, job } = input;
  const severity = PAGER_SEVERITY[input.channel.target as PagerTarget] ?? "error";
  const custom: Record<string, unknown> = {
    event: input.event,
    job: job.name,
    run_id: run.id,
    status: run.status,
    attempt: run.attempt,
    exit_code: run.exit_code,
    trigger: run.trigger,
    triggered_by: run.triggered_by,
    reason: run.reason,
    cycle_id: run.cycle_id,
    started_at: run.started_at,
    finished_at: run.finished_at,
    duration: formatDuration(runDurationMs(run)),
    error: run.error,
  };
  if (input.logs) custom.logs = input.logs.map((l) => l.line);
  return {
    v: 1,
    provider: "pager",
    integration: input.channel.integration,
    url: null,
    body: {
      event_action: "trigger",
      dedup_key: `${job.name}:${run.id}`,
      payload: {
        summary: truncate(input.message, MAX_SUMMARY),
        severity,
        source: "svc",
        custom_details: custom,
      },
    },
  };
}

/** Where a pager trigger goes: the integration's webhook_url when set, else the public endpoint. */
export function pagerUrl(webhookUrl: string | null): string {
  return webhookUrl ?? PAGER_EVENTS_URL;
}

export function withRoutingKey(body: Record<string, unknown>, routingKey: string): Record<string, unknown> {
  return { routing_key: routingKey, ...body };
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : s.slice(0, max - 1) + "…";
}
