import type { IntegrationConfig } from "../config/types.js";

/**
 * Secrets must never reach alert rows, logs or API answers. Errors we build
 * name endpoints by origin only; this is the second line of defence for text
 * we do not control (remote bodies, library error messages).
 */

/** `https://hooks.example/services/T0/B0/XYZ?token=1` -> `https://hooks.example`. */
export function describeUrl(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid URL)";
  }
}

/** Values of an integration that are credentials (webhook URLs carry tokens in their path). */
export function integrationSecrets(i: IntegrationConfig | null | undefined): string[] {
  if (!i) return [];
  return [i.webhookUrl, i.routingKey, i.password].filter((s): s is string => typeof s === "string" && s.length >= 4);
}

// The scheme, then the host and port (any `user:password@` before them left out), then the path and query.
const URL_WITH_PATH = /\b(https?:\/\/)(?:[^\s/?#"'<>@]*@)?([^\s/?#"'<>]+)[^\s"'<>]*/gi;

/** Replaces each secret with `***`, and cuts every URL down to its origin. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first, so a URL is replaced before a token inside it.
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) {
    out = out.split(s).join("***");
  }
  return out.replace(URL_WITH_PATH, "$1$2");
}

/** scrub() over every string (and key) of a parsed answer (a JSON body). */
export function scrubValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === "string") return scrub(value, secrets);
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, secrets));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrub(k, secrets), scrubValue(v, secrets)]));
  }
  return value;
}
