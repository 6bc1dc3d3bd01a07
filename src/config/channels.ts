import type { IntegrationConfig, ProviderId } from "./types.js";

/**
 * A notify channel string (`name:target`) resolved against the project's
 * integrations (CONTRACT §6). `provider: "smtp"` is the email channel.
 */
export interface ResolvedChannel {
  channel: string;
  provider: ProviderId;
  /** Integration name, or null for a direct `webhook:<url>` channel. */
  integration: string | null;
  /**
   * chat/forum: `#channel` or `@user`; pager: `p1`..`p4`; smtp: the address;
   * webhook: the URL, or "" to post to the integration's webhook_url.
   */
  target: string;
}

export interface ChannelError {
  error: string;
}

const PROVIDERS: readonly ProviderId[] = ["chat", "pager", "forum", "smtp", "webhook"];

function isProvider(s: string): s is ProviderId {
  return (PROVIDERS as readonly string[]).includes(s);
}

/** Splits at the first colon; a string without one has an empty target. */
export function parseChannel(channel: string): { name: string; target: string } {
  const i = channel.indexOf(":");
  if (i < 0) return { name: channel.trim(), target: "" };
  return { name: channel.slice(0, i).trim(), target: channel.slice(i + 1).trim() };
}

/**
 * Resolves a channel. The name is looked up as an integration name first, then
 * as a provider id (`email` meaning `smtp`): the integration named after the
 * provider, else the only integration of that provider. `webhook:<url>` needs
 * no integration. Returns `{error}` with a message fit for a config error.
 */
export function resolveChannel(
  channel: string,
  integrations: ReadonlyMap<string, IntegrationConfig>,
): ResolvedChannel | ChannelError {
  const { name, target } = parseChannel(channel);
  if (name === "") return { error: `channel "${channel}": missing name before ":"` };

  let integration: IntegrationConfig | null = integrations.get(name) ?? null;
  let provider: ProviderId;
  if (integration) {
    provider = integration.provider;
  } else {
    const wanted: ProviderId | null = name === "email" ? "smtp" : isProvider(name) ? name : null;
    if (!wanted) {
      const known = [...integrations.keys()].sort().join(", ") || "none";
      return {
        error: `channel "${channel}": unknown integration or provider "${name}" (integrations: ${known}; providers: ${PROVIDERS.join(", ")}, email)`,
      };
    }
    provider = wanted;
    const found = findByProvider(wanted, integrations);
    if ("error" in found) {
      // A direct webhook needs no integration.
      if (!(wanted === "webhook" && target !== "")) return { error: `channel "${channel}": ${found.error}` };
    } else {
      integration = found.integration;
    }
  }

  const targetError = checkTarget(provider, target, integration !== null);
  if (targetError) return { error: `channel "${channel}": ${targetError}` };
  return {
    channel,
    provider,
    // A webhook with its own URL does not use the integration's webhook_url.
    integration: provider === "webhook" && target !== "" ? null : (integration?.name ?? null),
    target: provider === "pager" ? target.toLowerCase() : target,
  };
}

function findByProvider(
  provider: ProviderId,
  integrations: ReadonlyMap<string, IntegrationConfig>,
): { integration: IntegrationConfig } | ChannelError {
  const named = integrations.get(provider);
  if (named && named.provider === provider) return { integration: named };
  const all = [...integrations.values()].filter((i) => i.provider === provider);
  if (all.length === 1) return { integration: all[0]! };
  if (all.length === 0) return { error: `no integration with provider "${provider}" is configured` };
  return {
    error: `several "${provider}" integrations (${all.map((i) => i.name).join(", ")}); use one of their names instead of "${provider}"`,
  };
}

function checkTarget(provider: ProviderId, target: string, hasIntegration: boolean): string | null {
  switch (provider) {
    case "chat":
      return /^[#@]\S+$/.test(target) ? null : `chat target must be "#channel" or "@user", got "${target}"`;
    case "forum":
      return /^#\S+$/.test(target) ? null : `forum target must be "#channel", got "${target}"`;
    case "pager":
      return /^p[1-4]$/i.test(target) ? null : `pager target must be a severity p1, p2, p3 or p4, got "${target}"`;
    case "smtp":
      return /^[^\s@]+@[^\s@]+$/.test(target) ? null : `email target must be an address like ops@example.org, got "${target}"`;
    case "webhook":
      if (target === "") {
        return hasIntegration ? null : `webhook target must be an http(s) URL`;
      }
      return isHttpUrl(target) ? null : `webhook target must be an http(s) URL`;
  }
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}
