/**
 * The config module's public API. The engine, daemon, API and CLI import
 * from here; the domain types are in ./types.ts.
 */
export { loadProject, parseProjectText } from "./project.js";
export { loadDaemonConfig, parseDaemonText, DEFAULT_RBAC } from "./daemon.js";
export { findConfig, dataDir, findDaemonConfig, ConfigNotFoundError, PROJECT_FILE, DAEMON_FILE } from "./discover.js";
export type { FindOptions, DataDirOptions } from "./discover.js";
export { resolveEnvRefs, envRefNames } from "./env.js";
export { effectiveView, daemonView, hideExposed, jobView, frequencyLabel, scheduleLabel, REDACTED } from "./views.js";
export { redactConfigText, secretValues, MASK } from "./redactText.js";
export type { RedactResult, SecretValue, TextIssue } from "./redactText.js";
export { SECRET_RULES } from "./redactRules.js";
export type { ConfigKind } from "./redactRules.js";
export { parseDuration, formatDuration } from "./duration.js";
export { formatIssue, displayPath } from "./issues.js";
export { MAX_CONFIG_BYTES } from "./readText.js";
export type * from "./types.js";
