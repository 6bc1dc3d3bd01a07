/**
 * JSON Schema of svc.yaml: the source of truth for its shape and defaults.
 * Semantic rules that a schema cannot express (sla < timeout, time vs
 * frequency, known timezones, dependency targets, notify channels,
 * per-provider credentials) live in project.ts.
 *
 * `x-message` is our annotation: the message shown when a value fails the
 * schema at that place (ajv's own wording is the fallback). Defaults are read
 * from here by the loader (`schemaDefault`), never repeated in code.
 * schemas/svc.schema.json is generated from this file (see generate.ts).
 */
import { MAX_PARAMS, PARAM_NAME_PATTERN, PARAM_TYPES } from "../params.js";
import type { JsonSchema } from "./jsonSchema.js";

export const JOB_NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$";
export const DURATION_BODY = "(?:[0-9]+(?:\\.[0-9]+)?(?:ms|s|m|h|d))+";
export const VAR_NAME_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*$";
export const FREQUENCIES = ["hourly", "daily", "weekly", "monthly", "weekdays", "weekends", "manual"] as const;
export const TIMED_FREQUENCIES = ["daily", "weekly", "monthly", "weekdays", "weekends"] as const;
export const PROVIDERS = ["chat", "pager", "forum", "smtp", "webhook"] as const;

const NAME_BODY = JOB_NAME_PATTERN.slice(1, -1);
const DURATION_MESSAGE = "must be a duration like 90s, 1h30m or 2d (a number and a unit: ms, s, m, h, d)";

const duration = (description: string, dflt?: string): JsonSchema => ({
  type: "string",
  pattern: `^${DURATION_BODY}$`,
  description,
  "x-message": DURATION_MESSAGE,
  ...(dflt === undefined ? {} : { default: dflt }),
});

const notifyEntryKeywords = {
  minLength: 1,
  properties: {
    channel: {
      type: "string",
      minLength: 1,
      description: "<integration or provider>:<target>, e.g. ops-chat:#data, pager:p1, email:ops@example.org, webhook:https://...",
    },
    message: { type: "string", description: "Message template with {{ job.* }} and {{ run.* }} variables." },
    attach_logs: {
      type: "string",
      pattern: "^(?:all|last_[1-9][0-9]{0,4}_lines)$",
      description: "Attach the run's log lines: all, or last_<N>_lines (N 1-10000).",
      "x-message": "must be all or last_<N>_lines with N from 1 to 10000, like last_50_lines",
    },
    only_after_failure: {
      type: "boolean",
      default: false,
      description: "on_success only: send only when the previous completed run failed.",
    },
  },
  required: ["channel"],
  additionalProperties: false,
} as const;

const timeSchema: JsonSchema = {
  type: "string",
  pattern: "^(?:[01][0-9]|2[0-3])[0-5][0-9]$",
  description: "Time of day, 24-hour HHMM, quoted: \"0230\".",
  "x-message": 'must be 4 digits HHMM (hour 00-23, minute 00-59), quoted like "0230"',
};

const notifyValue: JsonSchema = {
  type: ["string", "object", "array"],
  ...notifyEntryKeywords,
  minItems: 1,
  items: { $ref: "#/$defs/notifyEntry" },
  "x-message": "must be a channel string, an object with channel, or a list of them",
};

const excludeSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    dates: {
      type: "array",
      items: {
        type: "string",
        pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        "x-message": 'must be a date YYYY-MM-DD, like "2026-12-25"',
      },
      description: "Local dates (in the job's zone) on which scheduled slots do not run.",
      "x-message": "must be a list of dates YYYY-MM-DD",
    },
    calendar: {
      type: "string",
      minLength: 1,
      description:
        "An iCalendar (.ics) file, relative to svc.yaml: slots inside its events (all-day or timed, RRULE/EXDATE expanded) do not run. Re-read on reload.",
    },
  },
  description:
    "Scheduled slots that do not run (no run row; one INFO log line each). Merged with defaults.exclude as a union. Not for manual or after: jobs.",
};

/** One run parameter (CONTRACT §7.2); the rules between its fields are checked in params.ts. */
const paramSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    type: {
      enum: [...PARAM_TYPES],
      default: "string",
      description: "string (default), integer, number, boolean or enum (with values).",
      "x-message": `must be one of ${PARAM_TYPES.join(", ")}`,
    },
    default: {
      type: ["string", "number", "boolean"],
      description: "The value when a trigger passes none; scheduled, catch-up and dependency-triggered runs always take it. Without a default the param is required.",
      "x-message": "must be a string, a number or true/false",
    },
    required: {
      type: "boolean",
      description: "Default: true when there is no default. required: false without a default makes the param optional (empty when not passed).",
      "x-message": "must be true or false",
    },
    values: {
      type: "array",
      minItems: 1,
      uniqueItems: true,
      items: { type: "string", "x-message": "must be a string (quote numbers and booleans)" },
      description: "type: enum only: the allowed values.",
      "x-message": "must be a non-empty list of distinct strings",
    },
    pattern: {
      type: "string",
      minLength: 1,
      description: "type: string only: a regular expression the whole value must match.",
    },
    description: { type: "string", description: "Shown in the dashboard's run form and `svc run --help`-style listings." },
    secret: {
      type: "boolean",
      default: false,
      description: "Its values (and its default) read *** wherever they are shown.",
      "x-message": "must be true or false",
    },
  },
};

/** Fields a job may set and `defaults` may supply. */
const sharedJobFields = (frequency: JsonSchema): Record<string, JsonSchema> => ({
  frequency,
  exclude: excludeSchema,
  time: timeSchema,
  timezone: {
    type: "string",
    minLength: 1,
    description: "IANA timezone, e.g. Europe/Berlin. Fallback: defaults.timezone, then the system zone.",
  },
  weekday: {
    enum: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
    default: "mon",
    description: "weekly only: the day it runs.",
    "x-message": "must be one of mon, tue, wed, thu, fri, sat, sun",
  },
  day_of_month: {
    type: "integer",
    minimum: 1,
    maximum: 31,
    default: 1,
    description: "monthly only: the day it runs (a month without that day runs on its last day).",
    "x-message": "must be an integer from 1 to 31",
  },
  timeout: duration("Stop the job when it runs longer than this. Default: no timeout."),
  sla: duration("Fire on_sla_breach when the job is still running after this long; must be less than timeout."),
  tags: {
    type: "array",
    maxItems: 10,
    uniqueItems: true,
    items: {
      type: "string",
      minLength: 1,
      maxLength: 32,
      pattern: "^[a-z0-9][a-z0-9-]*$",
      "x-message": "must be lowercase letters, digits and hyphens (starting with a letter or digit), at most 32 characters",
    },
    default: [],
    description: "At most 10 tags; each lowercase alphanumeric with hyphens, at most 32 characters.",
    "x-message": "must be a list of at most 10 distinct tags",
  },
  on_failure: {
    enum: ["alert", "skip", "stop", "ignore"],
    default: "alert",
    description: "What happens when retries are exhausted.",
    "x-message": "must be one of alert, skip, stop, ignore",
  },
  retries: {
    type: "integer",
    minimum: 0,
    maximum: 100,
    default: 0,
    description: "Maximum number of retries (attempts = 1 + retries).",
    "x-message": "must be an integer from 0 to 100",
  },
  retry_delay: {
    type: "string",
    pattern: `^(?:exponential|fixed:${DURATION_BODY})$`,
    default: "exponential",
    description: "exponential (30s doubling, +-25% jitter, capped at 1h) or fixed:<duration>.",
    "x-message": "must be exponential or fixed:<duration>, like fixed:30s",
  },
  concurrency: {
    enum: ["allow", "forbid", "replace"],
    default: "forbid",
    description: "What happens when a run starts while another run of the job is RUNNING.",
    "x-message": "must be one of allow, forbid, replace",
  },
  catchup: {
    type: "boolean",
    default: false,
    description: "Run a missed schedule once after a restart (within scheduler.catchup_window).",
    "x-message": "must be true or false",
  },
  env: {
    type: "object",
    propertyNames: { pattern: VAR_NAME_PATTERN, "x-message": "environment variable names must match [A-Za-z_][A-Za-z0-9_]*" },
    additionalProperties: { type: "string", "x-message": "must be a string (quote numbers and booleans)" },
    default: {},
    description: "Environment variables; values may use ${env:VAR} and {{ outputs.<job>.<var> }}, resolved at dispatch.",
  },
  healthcheck: {
    type: "object",
    properties: {
      command: { type: "string", minLength: 1, description: "Run after the command exits 0." },
      timeout: duration("Healthcheck timeout.", "30s"),
      on_fail: {
        enum: ["mark_failed", "warn_only"],
        default: "mark_failed",
        "x-message": "must be mark_failed or warn_only",
      },
    },
    required: ["command"],
    additionalProperties: false,
  },
  output: {
    type: "object",
    propertyNames: { pattern: VAR_NAME_PATTERN, "x-message": "output variable names must match [A-Za-z_][A-Za-z0-9_]*" },
    additionalProperties: {
      type: "string",
      pattern: "^(?:last_line|first_line|exit_code|json_field:.+|regex:.+)$",
      "x-message": "must be last_line, first_line, exit_code, json_field:<key> or regex:<pattern>",
    },
    default: {},
    description: "Variable name -> capture mode; read downstream as {{ outputs.<job>.<var> }}.",
  },
  notify: {
    type: "object",
    properties: {
      on_success: { $ref: "#/$defs/notifyValue" },
      on_failure: { $ref: "#/$defs/notifyValue" },
      on_sla_breach: { $ref: "#/$defs/notifyValue" },
      on_retry: { $ref: "#/$defs/notifyValue" },
    },
    additionalProperties: false,
    default: {},
    description: "Event -> channel, {channel, message, attach_logs, only_after_failure}, or a list of them.",
  },
  params: {
    type: "object",
    maxProperties: MAX_PARAMS,
    propertyNames: { pattern: PARAM_NAME_PATTERN, "x-message": "param names must match [a-z_][a-z0-9_]* (lower case letters, digits, _)" },
    additionalProperties: { $ref: "#/$defs/param" },
    default: {},
    description: `Run parameters, name -> {type, default, required, values, pattern, description, secret} (at most ${MAX_PARAMS}); read as {{ params.<name> }} and $SVC_PARAM_<NAME>.`,
    "x-message": `must be a map of at most ${MAX_PARAMS} param names to declarations`,
  },
});

const jobSchema: JsonSchema = {
  type: "object",
  required: ["command"],
  additionalProperties: false,
  properties: {
    command: {
      type: ["string", "array"],
      minLength: 1,
      minItems: 1,
      items: { type: "string" },
      description: "A string runs through `shell -c`; an array is executed directly.",
      "x-message": "must be a non-empty string or a non-empty list of strings",
    },
    description: { type: "string", description: "What the job does (svc validate --strict warns when missing)." },
    depends_on: {
      type: "array",
      uniqueItems: true,
      items: { type: "string", pattern: JOB_NAME_PATTERN, "x-message": "must be a job name" },
      default: [],
      description: "Upstream jobs that must have succeeded.",
      "x-message": "must be a list of distinct job names",
    },
    ...sharedJobFields({
      type: "string",
      pattern: `^(?:${FREQUENCIES.join("|")}|after:${NAME_BODY}|cron:.*|every:.*)$`,
      description:
        "hourly, daily, weekly, monthly, weekdays, weekends, manual, after:<job>, cron:<5 or 6 fields or @macro> (\"cron:0 9 * * 1-5\") " +
        "or every:<n><s|m|h> (\"every:10s\"). Default: after-semantics with depends_on, else manual.",
      "x-message": `must be one of ${FREQUENCIES.join(", ")}, after:<job>, cron:<expression> or every:<n><unit>`,
    }),
  },
};

const integrationSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    provider: {
      enum: [...PROVIDERS],
      description: "Inferred when the integration's name is a provider id.",
      "x-message": `must be one of ${PROVIDERS.join(", ")}`,
    },
    webhook_url: { type: "string", minLength: 1, description: "chat, forum, webhook (required); pager (optional endpoint)." },
    routing_key: { type: "string", minLength: 1, description: "pager (required)." },
    host: { type: "string", minLength: 1, description: "smtp (required)." },
    from: { type: "string", minLength: 1, description: "smtp (required): sender address." },
    port: {
      type: "integer",
      minimum: 1,
      maximum: 65535,
      description: "smtp: port, default 587.",
      "x-message": "must be an integer from 1 to 65535",
    },
    username: { type: "string", description: "smtp credentials." },
    password: { type: "string", description: "smtp credentials." },
  },
};

export const svcSchema: JsonSchema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  $id: "https://svc.local/schemas/svc.schema.json",
  title: "svc.yaml",
  description: "Jobs, defaults and integrations of one svc project.",
  type: "object",
  required: ["jobs"],
  additionalProperties: false,
  properties: {
    defaults: {
      type: ["object", "null"],
      additionalProperties: false,
      properties: sharedJobFields({
        type: "string",
        pattern: `^(?:${FREQUENCIES.join("|")}|cron:.*|every:.*)$`,
        description: "The frequency of jobs without their own (and without depends_on): as a job's, except after:<job>.",
        "x-message": `must be one of ${FREQUENCIES.join(", ")}, cron:<expression> or every:<n><unit> (after:<job> is per job)`,
      }),
      description: "Values for every job field a job does not set (all but command, description, depends_on).",
    },
    integrations: {
      type: ["object", "null"],
      propertyNames: { pattern: JOB_NAME_PATTERN, "x-message": `integration names must match ${JOB_NAME_PATTERN}` },
      additionalProperties: { $ref: "#/$defs/integration" },
      default: {},
    },
    jobs: {
      type: ["object", "null"],
      propertyNames: { pattern: JOB_NAME_PATTERN, "x-message": `job names must match ${JOB_NAME_PATTERN}` },
      additionalProperties: { $ref: "#/$defs/job" },
      description: "Job name -> job.",
      "x-message": "must be a map of job name to job (write `jobs: {}` for none)",
    },
  },
  $defs: {
    job: jobSchema,
    integration: integrationSchema,
    notifyValue,
    notifyEntry: { type: ["string", "object"], ...notifyEntryKeywords },
    param: paramSchema,
  },
};
