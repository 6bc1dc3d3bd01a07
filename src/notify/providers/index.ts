import type { IntegrationConfig } from "../../config/types.js";
import { postJson, sendMail, type SendOptions } from "../transport.js";
import { buildChat } from "./chat.js";
import { buildEmail } from "./email.js";
import { buildForum } from "./forum.js";
import { buildPager, pagerUrl, withRoutingKey } from "./pager.js";
import type { AttemptResult, BuildInput, Delivery } from "./types.js";
import { buildWebhook } from "./webhook.js";

export type { AttemptResult, BuildInput, Delivery, EmailDelivery, HttpDelivery } from "./types.js";
export { PAGER_EVENTS_URL, PAGER_SEVERITY, pagerUrl } from "./pager.js";

/** Builds the stored delivery for a resolved channel. */
export function buildDelivery(input: BuildInput): Delivery {
  switch (input.channel.provider) {
    case "chat":
      return buildChat(input);
    case "forum":
      return buildForum(input);
    case "pager":
      return buildPager(input);
    case "webhook":
      return buildWebhook(input);
    case "smtp":
      return buildEmail(input);
  }
}

/** Parses an alert row's payload; null when it is not a delivery we wrote. */
export function parseDelivery(payload: string): Delivery | null {
  try {
    const d = JSON.parse(payload) as Partial<Delivery> | null;
    if (!d || d.v !== 1 || typeof d.provider !== "string") return null;
    return d as Delivery;
  } catch {
    return null;
  }
}

/**
 * One attempt. Credentials are read from the integration as configured now
 * (so a fixed `${env:}` value is picked up by a retry). Never throws except
 * DeliveryInterrupted.
 */
export async function sendDelivery(
  d: Delivery,
  integrations: ReadonlyMap<string, IntegrationConfig>,
  opts: SendOptions,
): Promise<AttemptResult> {
  const integration = d.integration ? integrations.get(d.integration) : undefined;
  if (d.integration && !integration) {
    return permanent(`integration "${d.integration}" is no longer configured`);
  }
  // A field whose ${env:} is unset is null, and some have defaults (a pager without webhook_url posts to
  // PagerDuty's public endpoint): sending then would take the credentials where the operator did not say.
  if (integration && integration.unsetVars.length > 0) {
    return permanent(`integration "${integration.name}" (${integration.provider}): env var unset: ${integration.unsetVars.join(", ")}; nothing is sent until it is set (and svcd reloaded)`);
  }
  if (d.provider === "smtp") {
    if (!integration) return permanent(`email needs an smtp integration`);
    const missing = missingFields(integration, ["host", "from"]);
    if (missing) return permanent(missing);
    return sendMail(integration, { to: d.to, subject: d.subject, text: d.text }, opts);
  }
  if (d.url) return postJson(d.url, d.body, opts);
  if (!integration) return permanent(`no URL to post to`);
  if (d.provider === "pager") {
    const missing = missingFields(integration, ["routingKey"]);
    if (missing) return permanent(missing);
    if (integration.webhookUrl === "") return permanent(`integration "${integration.name}" (pager): webhook_url is empty: remove it (PagerDuty's endpoint) or give the URL`);
    return postJson(pagerUrl(integration.webhookUrl), withRoutingKey(d.body, integration.routingKey!), opts);
  }
  const missing = missingFields(integration, ["webhookUrl"]);
  if (missing) return permanent(missing);
  return postJson(integration.webhookUrl!, d.body, opts);
}

const FIELD_NAMES = { host: "host", from: "from", routingKey: "routing_key", webhookUrl: "webhook_url" } as const;

function missingFields(i: IntegrationConfig, fields: (keyof typeof FIELD_NAMES)[]): string | null {
  const absent = fields.filter((f) => !i[f]).map((f) => FIELD_NAMES[f]);
  if (absent.length === 0) return null;
  const env = i.unsetVars.length ? ` (env var unset: ${i.unsetVars.join(", ")})` : "";
  return `integration "${i.name}" (${i.provider}): ${absent.join(", ")} not set${env}`;
}

function permanent(error: string): AttemptResult {
  return { ok: false, status: null, response: null, error, retryable: false };
}
