/**
 * The API's one door to the config loader: redacted views, raw-text
 * redaction and validation of a text that is not on disk yet.
 */
import { daemonView, effectiveView, jobView, parseDaemonText, parseProjectText, redactDaemonText } from "../config/index.js";
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
  return job ? { name, ...jobView(job, true) } : null;
}

export function daemonConfigView(daemon: DaemonConfig): Record<string, unknown> {
  return daemonView(daemon);
}

/** svcd.yaml line for line, secret values `***` (viewers may read it). */
export function redactedDaemonText(text: string): string {
  return redactDaemonText(text);
}

/**
 * Validates a config text as if it were the file at `path` (positions and
 * `.env` lookup are relative to it). The loader cycle-checks svc.yaml.
 */
export function validateConfigText(kind: ConfigFileKind, content: string, path: string): ValidationResult {
  const r = kind === "svc.yaml" ? parseProjectText(content, path) : parseDaemonText(content, path);
  return r.ok ? { valid: true, errors: [], warnings: r.warnings } : { valid: false, errors: r.errors, warnings: r.warnings };
}
