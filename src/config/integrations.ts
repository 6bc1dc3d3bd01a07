/**
 * `integrations:` entries: provider inference, per-provider required and
 * allowed fields, `${env:VAR}` interpolation at load and credential status.
 */
import type { CredentialStatus, IntegrationConfig, ProviderId } from "./types.js";
import { PROVIDERS } from "./schema/svcSchema.js";
import { resolveEnvRefs } from "./env.js";
import type { IssueList } from "./issues.js";
import { isDict, isInt, isString } from "./values.js";

/** Default SMTP port (submission with STARTTLS) when `port` is not set. */
export const SMTP_DEFAULT_PORT = 587;

type Field = "webhook_url" | "routing_key" | "host" | "from" | "port" | "username" | "password";

const RULES: Record<ProviderId, { required: Field[]; allowed: Field[] }> = {
  chat: { required: ["webhook_url"], allowed: ["webhook_url"] },
  forum: { required: ["webhook_url"], allowed: ["webhook_url"] },
  webhook: { required: ["webhook_url"], allowed: ["webhook_url"] },
  pager: { required: ["routing_key"], allowed: ["routing_key", "webhook_url"] },
  smtp: { required: ["host", "from"], allowed: ["host", "from", "port", "username", "password"] },
};

/** Fields that may hold `${env:VAR}` and are resolved at load (SPEC). */
const INTERPOLATED: readonly Field[] = ["webhook_url", "routing_key", "username", "password"];

export function isProviderId(s: string): s is ProviderId {
  return (PROVIDERS as readonly string[]).includes(s);
}

export function buildIntegration(
  name: string,
  raw: unknown,
  env: NodeJS.ProcessEnv,
  dotenv: Readonly<Record<string, string>>,
  issues: IssueList,
): IntegrationConfig | null {
  const at = ["integrations", name];
  if (!isDict(raw)) return null; // schema reported it
  const provider = isString(raw.provider) && isProviderId(raw.provider) ? raw.provider : isProviderId(name) ? name : null;
  if (provider === null) {
    if (raw.provider === undefined) {
      issues.error([...at, "provider"], `missing provider: "${name}" is not a provider id, so set provider: ${PROVIDERS.join(" | ")}`);
    }
    return null;
  }
  const rules = RULES[provider];
  let valid = true;
  for (const field of Object.keys(raw)) {
    if (isKnownField(field) && !rules.allowed.includes(field)) {
      issues.error([...at, field], `${field} is not used by ${provider} integrations (fields: ${rules.allowed.join(", ")})`);
      valid = false;
    }
  }
  for (const field of rules.required) {
    if (raw[field] === undefined || raw[field] === null) {
      issues.error([...at, field], `missing required field "${field}" for a ${provider} integration`);
      valid = false;
    }
  }
  if (provider === "smtp" && isString(raw.username) !== isString(raw.password)) {
    const missing = isString(raw.username) ? "password" : "username";
    issues.error([...at, missing], `smtp credentials need both username and password`);
    valid = false;
  }
  if (!valid) return null;

  const unsetVars: string[] = [];
  let emptyRequired = false;
  const text = (field: Field): string | null => {
    const v = raw[field];
    if (!isString(v)) return null;
    let out: string | null = v;
    if (INTERPOLATED.includes(field)) {
      const r = resolveEnvRefs(v, env, dotenv);
      if ("unset" in r) {
        unsetVars.push(r.unset);
        issues.warn(
          [...at, field],
          `\${env:${r.unset}} is not set (process environment or .env): the integration's credential status is "env var unset"`,
        );
        out = null;
      } else {
        out = r.value;
      }
    }
    if (out === "" && rules.required.includes(field)) emptyRequired = true;
    return out;
  };
  const integration: IntegrationConfig = {
    name,
    provider,
    webhookUrl: text("webhook_url"),
    routingKey: text("routing_key"),
    host: text("host"),
    from: text("from"),
    port: provider === "smtp" ? (isInt(raw.port, 1, 65535) ? raw.port : SMTP_DEFAULT_PORT) : null,
    username: text("username"),
    password: text("password"),
    credentialStatus: "configured",
    unsetVars,
  };
  integration.credentialStatus = credentialStatus(unsetVars, emptyRequired);
  if (integration.credentialStatus === "missing required fields") {
    issues.warn(at, `a required field of this ${provider} integration is empty: its credential status is "missing required fields"`);
  }
  return integration;
}

function credentialStatus(unsetVars: string[], emptyRequired: boolean): CredentialStatus {
  if (unsetVars.length > 0) return "env var unset";
  if (emptyRequired) return "missing required fields";
  return "configured";
}

function isKnownField(f: string): f is Field {
  return ["webhook_url", "routing_key", "host", "from", "port", "username", "password"].includes(f);
}
