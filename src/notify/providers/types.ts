import type { JobConfig } from "../../config/types.js";
import type { LogLine, RunRecord } from "../../store/types.js";
import type { ResolvedChannel } from "../../config/channels.js";

/**
 * What an alert row stores in `payload` (JSON) so that a retry or a restarted
 * daemon re-sends the same content. Credentials (webhook_url of an
 * integration, routing_key, SMTP login) are NOT stored: they are read from
 * the integration at send time, so the database holds no secrets.
 */
export type Delivery = HttpDelivery | EmailDelivery;

export interface HttpDelivery {
  v: 1;
  provider: "chat" | "forum" | "pager" | "webhook";
  /** Integration whose webhook_url (and routing_key) is used; null with `url`. */
  integration: string | null;
  /** Direct `webhook:<url>` target, else null. */
  url: string | null;
  /** The JSON body, minus `routing_key` for pager (added at send time). */
  body: Record<string, unknown>;
}

export interface EmailDelivery {
  v: 1;
  provider: "smtp";
  integration: string;
  to: string;
  subject: string;
  text: string;
}

/** Everything a provider needs to build its payload. */
export interface BuildInput {
  event: string;
  job: Pick<JobConfig, "name" | "description" | "tags" | "schedule" | "after" | "dependsOn">;
  run: RunRecord;
  /** The rendered message. */
  message: string;
  /** Attached log lines (attach_logs), or null when none were asked for. */
  logs: LogLine[] | null;
  channel: ResolvedChannel;
}

/** The outcome of one delivery attempt. */
export interface AttemptResult {
  ok: boolean;
  /** HTTP status, or the SMTP reply code; null when no reply came. */
  status: number | null;
  /** The remote body (parsed JSON when it is JSON) or SMTP reply text. */
  response: unknown;
  /** Why it failed (secret-free), null on success. */
  error: string | null;
  /** Network error, timeout, HTTP 5xx/429, SMTP 4xx: worth another attempt. */
  retryable: boolean;
}

/** Plain-text block of attached log lines, "" when none. */
export function logsText(logs: LogLine[] | null): string {
  if (!logs) return "";
  if (logs.length === 0) return "(no log lines)";
  return logs.map((l) => l.line).join("\n");
}
