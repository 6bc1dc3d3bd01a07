/**
 * JSON Schema of svcd.yaml, the daemon config. Every field is optional and
 * every default lives here (read by daemon.ts through `schemaDefault`).
 * Sections may be empty (`api:` with everything commented out).
 * schemas/svcd.schema.json is generated from this file (see generate.ts).
 */
import type { JsonSchema } from "./jsonSchema.js";
import { DURATION_BODY, VAR_NAME_PATTERN } from "./svcSchema.js";

const DURATION_MESSAGE = "must be a duration like 90s, 1h30m or 2d (a number and a unit: ms, s, m, h, d)";

const duration = (description: string, dflt?: string): JsonSchema => ({
  type: "string",
  pattern: `^${DURATION_BODY}$`,
  description,
  "x-message": DURATION_MESSAGE,
  ...(dflt === undefined ? {} : { default: dflt }),
});

const section = (description: string, properties: Record<string, JsonSchema>): JsonSchema => ({
  type: ["object", "null"],
  additionalProperties: false,
  properties,
  description,
  "x-message": "must be a map",
});

const int = (min: number, dflt: number | undefined, description: string): JsonSchema => ({
  type: "integer",
  minimum: min,
  ...(dflt === undefined ? {} : { default: dflt }),
  description,
  "x-message": `must be an integer >= ${min}`,
});

const bool = (dflt: boolean, description: string): JsonSchema => ({
  type: "boolean",
  default: dflt,
  description,
  "x-message": "must be true or false",
});

const path = (description: string): JsonSchema => ({ type: "string", minLength: 1, description });

// A ** segment only as the last one: a rule such as "GET /api/**/run" would be dropped at runtime (src/api/auth/rbac.ts).
export const RBAC_RULE_PATTERN = "^(?:\\*|GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (?!\\S*/\\*\\*/)/\\S*$";

export const svcdSchema: JsonSchema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  $id: "https://svc.local/schemas/svcd.schema.json",
  title: "svcd.yaml",
  description: "Daemon config: API, auth, logging, storage, scheduler, executor and metrics. Every field is optional.",
  type: ["object", "null"],
  additionalProperties: false,
  "x-message": "must be a map of sections (api, auth, log, storage, scheduler, executor, metrics)",
  properties: {
    api: section("HTTP API and dashboard.", {
      addr: {
        type: "string",
        description: "Bind address host:port. Default 127.0.0.1 with a port chosen by the OS.",
      },
      base_path: {
        type: "string",
        pattern: "^(?:/[A-Za-z0-9._~-]+)*/?$",
        default: "",
        description: "URL prefix for dashboard and API, e.g. /svc.",
        "x-message": "must be a URL path like /svc",
      },
      tls: section("Serve HTTPS.", {
        enabled: bool(false, "Serve TLS (cert and key required)."),
        cert: path("PEM certificate file (relative paths are resolved against svcd.yaml's directory)."),
        key: path("PEM private key file."),
        min_version: {
          enum: ["1.2", "1.3", 1.2, 1.3],
          default: "1.2",
          description: "Minimum TLS version.",
          "x-message": 'must be "1.2" or "1.3"',
        },
        client_ca: path("When set, clients must present a certificate signed by this CA (mutual TLS)."),
      }),
      cors: section("Cross-origin requests.", {
        allowed_origins: {
          type: "array",
          items: { type: "string", minLength: 1 },
          default: [],
          description: "Origins allowed to call the API; * allows any (startup warning).",
          "x-message": "must be a list of origins",
        },
        allow_credentials: bool(false, "Send Access-Control-Allow-Credentials."),
      }),
      timeouts: section("HTTP server timeouts (0s disables one).", {
        read_header: duration("Time to receive request headers.", "10s"),
        read: duration("Time to receive the whole request.", "30s"),
        write: duration("Time to send a response (not applied to WebSocket streams after the upgrade).", "60s"),
        idle: duration("Keep-alive idle time between requests.", "120s"),
      }),
    }),
    auth: section("Authentication and authorization.", {
      type: {
        enum: ["none", "bearer", "basic", "oidc"],
        default: "none",
        description: "none, bearer, basic, or oidc (not supported yet: the daemon refuses to start).",
        "x-message": "must be one of none, bearer, basic, oidc",
      },
      bearer: section("Bearer tokens.", {
        token_file: path("File with one token per line (`<token>` or `<token> <role>`); re-read on reload."),
        token: {
          type: "string",
          minLength: 1,
          description: "Inline token (role admin). The file form is preferred. May be ${env:VAR}.",
        },
      }),
      basic: section("HTTP Basic users.", {
        users: {
          type: "array",
          default: [],
          items: {
            type: "object",
            additionalProperties: false,
            required: ["username", "password_hash"],
            properties: {
              username: { type: "string", minLength: 1 },
              password_hash: {
                type: "string",
                description: "bcrypt hash ($2a$, $2b$ or $2y$). May be ${env:VAR}.",
              },
              role: { type: "string", minLength: 1, default: "admin" },
            },
          },
          "x-message": "must be a list of {username, password_hash, role}",
        },
      }),
      oidc: section("OpenID Connect (planned; the daemon refuses to start with auth.type oidc).", {
        issuer: { type: "string" },
        client_id: { type: "string" },
        audience: { type: "string" },
        jwks_uri: { type: "string" },
        role_claim: { type: "string" },
        default_role: { type: "string" },
      }),
      rbac: {
        type: ["object", "null"],
        propertyNames: { pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", "x-message": "role names must be letters, digits, _ . -" },
        additionalProperties: {
          type: "array",
          items: {
            type: "string",
            pattern: RBAC_RULE_PATTERN,
            "x-message": 'must be "METHOD /path/pattern" with ** only as the last segment, e.g. "GET /**" or "POST /api/jobs/*/run"',
          },
          "x-message": 'must be a list of "METHOD /path/pattern" rules',
        },
        description: "Role -> allowed \"METHOD /path\" patterns (* one segment, ** any rest). Merged over the built-in viewer, operator and admin.",
        "x-message": "must be a map of role to rules",
      },
    }),
    log: section("Daemon logging.", {
      level: {
        enum: ["debug", "info", "warn", "error"],
        default: "info",
        "x-message": "must be one of debug, info, warn, error",
      },
      format: { enum: ["json", "text"], default: "text", "x-message": "must be json or text" },
      output: {
        enum: ["stdout", "stderr", "file"],
        default: "stdout",
        "x-message": "must be one of stdout, stderr, file",
      },
      file: section("Log file and rotation (log.output: file).", {
        path: path("Log file. Default <data>/svcd.log."),
        max_size_mb: int(1, 50, "Rotate when the file reaches this size."),
        max_backups: int(0, 5, "Rotated files kept (0 keeps all)."),
        max_age_days: int(0, 30, "Delete rotated files older than this (0 keeps them)."),
        compress: bool(false, "Gzip rotated files."),
      }),
      audit_log: section("Newline-delimited JSON audit log of job state transitions.", {
        enabled: bool(false, "Write the audit log."),
        path: path("Audit log file. Default <data>/audit.log."),
        max_size_mb: int(1, 50, "Rotate when the file reaches this size."),
        max_backups: int(0, 5, "Rotated files kept (0 keeps all)."),
      }),
    }),
    storage: section("Run history database.", {
      engine: {
        enum: ["sqlite", "postgres"],
        default: "sqlite",
        description: "sqlite; postgres is parsed but not supported yet (the daemon refuses to start).",
        "x-message": "must be sqlite or postgres",
      },
      sqlite: section("SQLite settings.", {
        path: path("Database file. Default <data>/svc.db."),
        wal_autocheckpoint: int(0, 1000, "WAL auto-checkpoint, in pages."),
        busy_timeout: duration("How long a writer waits for a lock.", "5s"),
      }),
      retention: section("Pruning of old runs (with their logs and outputs).", {
        max_age: duration("Delete runs older than this. Default: keep."),
        max_runs_per_job: int(1, undefined, "Keep only the N most recent completed runs per job. Default: keep all."),
        interval: duration("How often retention runs: 30 s after startup (or after one interval, if shorter), then every interval.", "24h"),
      }),
    }),
    scheduler: section("Scheduler.", {
      max_concurrent_jobs: int(1, 32, "Runs RUNNING or RETRYING at once."),
      catchup_window: duration("How far back a missed schedule is still caught up.", "24h"),
      shutdown_timeout: duration("How long a graceful stop waits for running jobs.", "60s"),
      schedule_jitter: duration("Random delay (up to this) added to scheduled triggers.", "0s"),
    }),
    executor: section("Subprocesses.", {
      pool_size: int(1, 8, "Subprocesses running at once."),
      shell: { type: "string", minLength: 1, default: "/bin/sh", description: "Shell for string commands." },
      global_env: {
        type: ["object", "null"],
        propertyNames: { pattern: VAR_NAME_PATTERN, "x-message": "environment variable names must match [A-Za-z_][A-Za-z0-9_]*" },
        additionalProperties: { type: "string", "x-message": "must be a string (quote numbers and booleans)" },
        default: {},
        description: "Variables injected into every job (a job's env wins).",
      },
      kill_grace: duration("Time between SIGTERM and SIGKILL on timeout or cancel.", "10s"),
    }),
    metrics: section("Prometheus metrics at GET /metrics (under api.base_path; auth and RBAC as other GETs).", {
      enabled: bool(true, "Serve GET /metrics. Changes take effect at the next restart."),
    }),
  },
};
