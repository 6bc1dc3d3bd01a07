/**
 * The validated, frozen domain types that the rest of svc reads. The loader
 * (`loadProject`, `loadDaemonConfig`) turns raw YAML into these in two stages:
 * raw shape checked by JSON Schema, then semantic rules; every error is
 * collected with its position.
 *
 * Durations are parsed to milliseconds here; nothing downstream parses
 * duration strings again.
 */
import type { DepGraph } from "../graph/depGraph.js";

/**
 * What loading a config file gives: the frozen config and its warnings, or
 * every error found (never just the first) and the warnings.
 */
export type LoadResult<T> =
  | { ok: true; value: T; warnings: ConfigIssue[] }
  | { ok: false; errors: ConfigIssue[]; warnings: ConfigIssue[] };

/** One problem found in a config file. `path` is a JSON pointer (`/jobs/extract/time`). */
export interface ConfigIssue {
  file: string;
  line: number; // 1-based; 0 when unknown (e.g. missing file)
  column: number; // 1-based; 0 when unknown
  path: string;
  message: string;
}

export type Weekday = "mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun";

export type FrequencyKind =
  | "hourly"
  | "daily"
  | "weekly"
  | "monthly"
  | "weekdays"
  | "weekends"
  | "manual"
  | "after"
  | "cron"
  | "every";

export type OnFailure = "alert" | "skip" | "stop" | "ignore";
export type Concurrency = "allow" | "forbid" | "replace";

export type OutputMode =
  | { kind: "last_line" }
  | { kind: "first_line" }
  | { kind: "json_field"; key: string }
  | { kind: "regex"; pattern: string }
  | { kind: "exit_code" };

export type RetryDelay = { kind: "exponential" } | { kind: "fixed"; ms: number };

export interface HealthcheckConfig {
  command: string;
  timeoutMs: number; // default 30 000
  onFail: "mark_failed" | "warn_only";
}

export type NotifyEvent = "on_success" | "on_failure" | "on_sla_breach" | "on_retry";

export interface NotifyEntry {
  channel: string; // "<integration or provider>:<target>"
  message: string | null; // template; null = the default message (CONTRACT §6)
  attachLogs: null | "all" | { lastLines: number };
  onlyAfterFailure: boolean;
}

/** Time of day from `time: "HHMM"`. */
export interface TimeOfDay {
  hour: number;
  minute: number;
}

/**
 * A parsed `cron:` expression, or the expression an `every:` stands for
 * (CONTRACT §7.1). Plain data: sets of allowed values, sorted ascending.
 */
export interface CronSpec {
  /** As written after `cron:` or `every:` ("*\/5 * * * *", "@daily", "10s"). */
  source: string;
  /** The six fields it means, second first ("0 *\/5 * * * *"). */
  expr: string;
  seconds: number[]; // 0-59
  minutes: number[]; // 0-59
  hours: number[]; // 0-23
  daysOfMonth: number[]; // 1-31
  /** Day-of-month `L`: the month's last day. */
  lastDayOfMonth: boolean;
  months: number[]; // 1-12
  weekdays: number[]; // 0-6, 0 = Sunday (7 is stored as 0)
  /** `5L`: the month's last such weekday. */
  lastWeekdays: number[];
  /** `1#2`: the n-th (1-5) such weekday of the month. */
  nthWeekdays: { weekday: number; n: number }[];
  /** The field does not start with `*`: with both restricted a day matches if either matches (Vixie). */
  domRestricted: boolean;
  dowRestricted: boolean;
  /** Neither minute nor hour starts with `*`: §3's DST rules; otherwise periodic (wall clock as it reads). */
  fixedTime: boolean;
}

/** One `.ics` file of `exclude.calendar`, read at load (and on reload). */
export interface CalendarSource {
  /** Absolute path. */
  path: string;
  /** As written in svc.yaml, for messages ("holidays.ics"). */
  name: string;
  /** The file's text; the schedule module expands its events (RRULE, EXDATE) on demand. */
  text: string;
}

/** `exclude:` of the job merged with the one of `defaults` (a union). */
export interface ExcludeSpec {
  /** Local dates "YYYY-MM-DD", sorted, distinct. */
  dates: string[];
  calendars: CalendarSource[];
}

/** What the schedule module needs to compute next runs. */
export interface ScheduleSpec {
  frequency: FrequencyKind;
  time: TimeOfDay | null;
  weekday: Weekday | null; // weekly only; default "mon" is applied by the loader
  dayOfMonth: number | null; // monthly only; default 1 is applied by the loader
  timezone: string; // resolved IANA zone: job, then defaults.timezone, then system zone
  /** `cron:` and `every:` only (the loader always sets it; absent = null). */
  cron?: CronSpec | null;
  /** Slots that do not run; null or absent when nothing is excluded. */
  exclude?: ExcludeSpec | null;
}

export type ParamType = "string" | "integer" | "number" | "boolean" | "enum";
export type ParamValue = string | number | boolean;

/** One declared run parameter (CONTRACT §7.2). */
export interface ParamSpec {
  name: string;
  type: ParamType;
  /** null: none declared. */
  default: ParamValue | null;
  /** True when a trigger must pass it (no default, unless `required: false`). */
  required: boolean;
  /** The allowed values of an enum. */
  values: string[] | null;
  /** A string must match it whole. */
  pattern: string | null;
  description: string | null;
  /** Its values read `***` wherever they are shown. */
  secret: boolean;
}

export interface JobConfig {
  name: string;
  command: string | string[];
  description: string | null;
  schedule: ScheduleSpec;
  /** The job named by `frequency: after:<job>`, else null. */
  after: string | null;
  /** `depends_on` as written. */
  dependsOn: string[];
  /** depends_on plus the `after:` job, de-duplicated, in declaration order. */
  upstreams: string[];
  /**
   * True when upstream successes trigger this job (CONTRACT §3): frequency
   * `after:...`, or no frequency given and a non-empty depends_on.
   */
  dependencyTriggered: boolean;
  timeoutMs: number | null;
  slaMs: number | null;
  tags: string[];
  onFailure: OnFailure;
  retries: number; // 0-100; attempts = 1 + retries
  retryDelay: RetryDelay;
  concurrency: Concurrency;
  catchup: boolean;
  /** Raw values: `${env:VAR}` and `{{ outputs.* }}` are resolved at dispatch, never here. */
  env: Record<string, string>;
  healthcheck: HealthcheckConfig | null;
  output: Record<string, OutputMode>;
  notify: Partial<Record<NotifyEvent, NotifyEntry[]>>;
  /** Declared run parameters by name, in declaration order (defaults' first, then the job's). */
  params: Record<string, ParamSpec>;
}

export type ProviderId = "chat" | "pager" | "forum" | "smtp" | "webhook";

export type CredentialStatus = "configured" | "missing required fields" | "env var unset";

export interface IntegrationConfig {
  name: string;
  provider: ProviderId;
  /** Fields after `${env:}` interpolation at load. Unset variables leave the field null. */
  webhookUrl: string | null;
  routingKey: string | null;
  host: string | null;
  from: string | null;
  port: number | null;
  username: string | null;
  password: string | null;
  credentialStatus: CredentialStatus;
  /** Names of the `${env:VAR}` references that were unset at load. */
  unsetVars: string[];
}

export interface ProjectConfig {
  /** Absolute path of svc.yaml. */
  file: string;
  /** Directory of svc.yaml: the jobs' working directory. */
  dir: string;
  /** Jobs by name, in file order. */
  jobs: Map<string, JobConfig>;
  integrations: Map<string, IntegrationConfig>;
  /** Variables from `.env` beside svc.yaml (process env wins at lookup). */
  dotenv: Record<string, string>;
  /** Warnings for `svc validate --strict` (missing descriptions, ...). */
  warnings: ConfigIssue[];
  /** The dependency DAG (acyclic: a cycle is a load error). */
  graph: DepGraph;
  /** The zone of jobs without their own: `defaults.timezone`, else the system zone. */
  defaultTimezone: string;
  /** Secret text also written in a plain field through a YAML anchor: hidden wherever the views show it (views.ts). */
  exposedSecrets: readonly string[];
}

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface BearerToken {
  token: string;
  role: string;
}

export interface BasicUser {
  username: string;
  passwordHash: string;
  role: string;
}

/** svcd.yaml with every default applied. Durations in ms. */
export interface DaemonConfig {
  /** Absolute path of svcd.yaml, or null when none was found. */
  file: string | null;
  api: {
    addr: string | null; // "host:port"; null = 127.0.0.1 with an OS-chosen port
    basePath: string; // "" or "/prefix" (no trailing slash)
    tls: {
      enabled: boolean;
      cert: string | null;
      key: string | null;
      minVersion: "1.2" | "1.3";
      clientCa: string | null;
    };
    cors: { allowedOrigins: string[]; allowCredentials: boolean };
    timeouts: { readHeaderMs: number; readMs: number; writeMs: number; idleMs: number };
  };
  auth: {
    type: "none" | "bearer" | "basic" | "oidc";
    bearer: { tokenFile: string | null; token: string | null };
    basic: { users: BasicUser[] };
    oidc: Record<string, unknown> | null;
    /** role -> ["METHOD /pattern", ...], built-in defaults merged in. */
    rbac: Record<string, string[]>;
  };
  log: {
    level: LogLevel;
    format: "json" | "text";
    output: "stdout" | "stderr" | "file";
    file: {
      path: string | null;
      maxSizeMb: number;
      maxBackups: number;
      maxAgeDays: number;
      compress: boolean;
    };
    auditLog: { enabled: boolean; path: string | null; maxSizeMb: number; maxBackups: number };
  };
  storage: {
    engine: "sqlite" | "postgres";
    sqlite: { path: string | null; walAutocheckpoint: number; busyTimeoutMs: number };
    /** `intervalMs`: how often retention runs (default 24 h). */
    retention: { maxAgeMs: number | null; maxRunsPerJob: number | null; intervalMs: number };
  };
  scheduler: {
    maxConcurrentJobs: number;
    catchupWindowMs: number;
    shutdownTimeoutMs: number;
    scheduleJitterMs: number;
  };
  executor: {
    poolSize: number;
    shell: string;
    globalEnv: Record<string, string>;
    killGraceMs: number;
  };
  metrics: { enabled: boolean };
  /** Secret text also written in a plain field through a YAML anchor: hidden wherever the views show it (views.ts). */
  exposedSecrets: readonly string[];
}
