/**
 * The API's one door to the config loader: redacted views, the save guard
 * against placeholders and validation of a text that is not on disk yet.
 * The functions that parse a whole text (redactedText,
 * placeholdersOverSecrets, validateConfigText) run in the config worker's
 * thread (configWorker.ts), never on the daemon's event loop.
 */
import {
  daemonView,
  effectiveView,
  hideExposed,
  jobView,
  MASK,
  parseDaemonText,
  parseProjectText,
  redactConfigText,
  secretValues,
  type RedactResult,
  type SecretValue,
} from "../config/index.js";
import type { ConfigIssue, DaemonConfig, ProjectConfig } from "../config/types.js";

export type ConfigFileKind = "svc.yaml" | "svcd.yaml";

export interface ValidationResult {
  valid: boolean;
  errors: ConfigIssue[];
  warnings: ConfigIssue[];
}

/** svc.yaml with defaults applied, `env` values and secrets `***` (CONTRACT §4). */
export function projectConfigView(project: ProjectConfig): Record<string, unknown> {
  return effectiveView(project, { redact: true });
}

/** One job in the YAML vocabulary, defaults applied, env redacted; null for an unknown job. */
export function jobConfigView(project: ProjectConfig, name: string): Record<string, unknown> | null {
  const job = project.jobs.get(name);
  return job ? hideExposed({ name, ...jobView(job, true) }, project.exposedSecrets) : null;
}

export function daemonConfigView(daemon: DaemonConfig): Record<string, unknown> {
  return daemonView(daemon);
}

/**
 * A config file's text line for line with its secret values `***`
 * (CONTRACT §7.5), or its YAML errors when it cannot be parsed (it is then
 * never shown). Seconds for a large file: the config worker runs it.
 */
export function redactedText(kind: ConfigFileKind, text: string): RedactResult {
  return redactConfigText(kind, text);
}

/** What a redacted secret value reads: `"***"` without its quotes. */
export const PLACEHOLDER = MASK.slice(1, -1);

/**
 * Secret values written as `"***"` where the file on disk holds another
 * value at the same place: the text is (partly) a redacted copy, and saving
 * it would overwrite the secrets with the placeholder. Commented-out secrets
 * count too. One issue per value.
 */
export function placeholdersOverSecrets(kind: ConfigFileKind, content: string, current: string | null, file: string): ConfigIssue[] {
  if (current === null) return [];
  const next = secretValues(kind, content);
  const now = secretValues(kind, current);
  if (!next.ok || !now.ok) return [];
  const keyOf = (v: SecretValue) => `${v.inComment ? "#" : ""}${v.pointer}`;
  const held = new Set(now.values.filter((v) => v.value !== PLACEHOLDER).map(keyOf));
  const seen = new Set<string>();
  const raw = `GET ${kind === "svc.yaml" ? "/api/config/source" : "/api/config/daemon"}?raw=1`;
  return next.values
    .filter((v) => v.value === PLACEHOLDER && held.has(keyOf(v)) && !seen.has(keyOf(v)) && seen.add(keyOf(v)))
    .map((v) => ({
      file,
      line: v.line,
      column: v.column,
      path: v.pointer,
      message: `"${PLACEHOLDER}" is the redacted placeholder, not the ${v.inComment ? "commented-out " : ""}secret value: saving it would replace the secret in ${file}. Edit the raw text (${raw}), or write the new value`,
    }));
}

/**
 * Validates a config text as if it were the file at `path` (positions and
 * `.env` lookup are relative to it). The loader cycle-checks svc.yaml.
 */
export function validateConfigText(kind: ConfigFileKind, content: string, path: string): ValidationResult {
  const r = kind === "svc.yaml" ? parseProjectText(content, path) : parseDaemonText(content, path);
  return r.ok ? { valid: true, errors: [], warnings: r.warnings } : { valid: false, errors: r.errors, warnings: r.warnings };
}
