import type { IntegrationConfig, ProjectConfig } from "../config/types.js";
import { resolveChannel } from "../config/channels.js";
import type { Delivery } from "./providers/types.js";

/**
 * The test message `testIntegration` sends: the provider's usual payload shape
 * with a test text. The target (chat channel, email address) is the first one
 * the project's notify entries use with this integration; without one, chat
 * and forum omit `channel` (the webhook's default channel) and email goes to
 * the integration's own `from` address.
 */
export function buildTestDelivery(i: IntegrationConfig, project: ProjectConfig, at: string): Delivery {
  const message = `svc: test notification from integration "${i.name}" (${i.provider}) at ${at}`;
  const target = firstTarget(i.name, project);
  switch (i.provider) {
    case "chat":
      return http(i, { ...(target ? { channel: target } : {}), text: message });
    case "forum":
      return http(i, { ...(target ? { channel: target } : {}), content: message });
    case "pager":
      return http(i, {
        event_action: "trigger",
        dedup_key: `svc-test:${i.name}:${at}`,
        payload: {
          summary: message,
          severity: "info",
          source: "svc",
          custom_details: { test: true, integration: i.name },
        },
      });
    case "webhook":
      return http(i, { event: "test", job: null, run: null, message });
    case "smtp":
      return {
        v: 1,
        provider: "smtp",
        integration: i.name,
        to: target ?? i.from ?? "",
        subject: `[svc] test notification (${i.name})`,
        text: message + "\n",
      };
  }
}

function http(i: IntegrationConfig, body: Record<string, unknown>): Delivery {
  return { v: 1, provider: i.provider as "chat" | "forum" | "pager" | "webhook", integration: i.name, url: null, body };
}

function firstTarget(name: string, project: ProjectConfig): string | null {
  for (const job of project.jobs.values()) {
    for (const entries of Object.values(job.notify)) {
      for (const e of entries ?? []) {
        const r = resolveChannel(e.channel, project.integrations);
        if (!("error" in r) && r.integration === name && r.target !== "") return r.target;
      }
    }
  }
  return null;
}
