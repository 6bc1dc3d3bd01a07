/**
 * Plain-JSON views of the loaded configs in the YAML vocabulary (snake_case
 * keys, durations as strings), with every default applied and secrets shown
 * as `***` (CONTRACT §5): `svc config show`, `GET /api/config`, the dag.
 */
import type { DaemonConfig, IntegrationConfig, JobConfig, NotifyEntry, OutputMode, ParamSpec, ProjectConfig } from "./types.js";
import { formatDuration } from "./duration.js";

export const REDACTED = "***";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * The one frequency text every view shows (`/api/jobs`, `/api/dag`, the
 * `job.frequency` template variable, the webhook payload): `daily`,
 * `after:extract`. A job that is dependency-triggered through depends_on
 * alone reads `after:<upstreams joined by commas>` (display only, not valid
 * in svc.yaml), so a notification says what it runs after.
 */
export function frequencyLabel(job: Pick<JobConfig, "schedule" | "after" | "dependsOn">): string {
  const s = job.schedule;
  if ((s.frequency === "cron" || s.frequency === "every") && s.cron) return `${s.frequency}:${s.cron.source}`;
  if (s.frequency !== "after") return s.frequency;
  return `after:${job.after ?? job.dependsOn.join(",")}`;
}

/** `daily 02:30 Europe/Berlin`, `weekly mon 09:00 UTC`, `hourly UTC`, `after:extract`, `manual`. */
export function scheduleLabel(job: JobConfig): string {
  const s = job.schedule;
  if (s.frequency === "after") return frequencyLabel(job);
  if (s.frequency === "manual") return "manual";
  const parts: string[] = [frequencyLabel(job)];
  if (s.weekday) parts.push(s.weekday);
  if (s.dayOfMonth !== null) parts.push(`day ${s.dayOfMonth}`);
  if (s.time) parts.push(`${pad(s.time.hour)}:${pad(s.time.minute)}`);
  parts.push(s.timezone);
  return parts.join(" ");
}

export function effectiveView(project: ProjectConfig, opts: { redact: boolean } = { redact: true }): Record<string, Json> {
  const secret = (v: string | null): Json => (v === null ? null : opts.redact ? REDACTED : v);
  const integrations: Record<string, Json> = {};
  for (const i of project.integrations.values()) integrations[i.name] = integrationView(i, secret);
  const jobs: Record<string, Json> = {};
  for (const job of project.jobs.values()) jobs[job.name] = jobView(job, opts.redact);
  const view = { defaults: { timezone: project.defaultTimezone }, integrations, jobs };
  return opts.redact ? hideExposed(view, project.exposedSecrets) : view;
}

/**
 * The view with every text equal to one of `exposed` shown as `***`: a
 * secret anchored in a plain field (`description: &t s3cret`) and aliased
 * into a secret one (`env: {TOKEN: *t}`) is hidden in both (the source view
 * masks it where it is written: redactText.ts). Whole texts only.
 */
export function hideExposed<T extends Json>(view: T, exposed: readonly string[]): T {
  if (exposed.length === 0) return view;
  const hidden = new Set(exposed);
  const walk = (v: Json): Json => {
    if (typeof v === "string") return hidden.has(v) ? REDACTED : v;
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(view) as T;
}

function integrationView(i: IntegrationConfig, secret: (v: string | null) => Json): Json {
  const out: Record<string, Json> = { provider: i.provider };
  if (i.provider === "smtp") {
    Object.assign(out, { host: i.host, from: i.from, port: i.port, username: secret(i.username), password: secret(i.password) });
  } else {
    if (i.provider === "pager") out.routing_key = secret(i.routingKey);
    out.webhook_url = secret(i.webhookUrl);
  }
  out.credential_status = i.credentialStatus;
  return out;
}

/** One job in the YAML vocabulary, defaults applied. */
export function jobView(job: JobConfig, redact = true): Record<string, Json> {
  const s = job.schedule;
  const env: Record<string, Json> = {};
  for (const [k, v] of Object.entries(job.env)) env[k] = redact ? REDACTED : v;
  const output: Record<string, Json> = {};
  for (const [k, mode] of Object.entries(job.output)) output[k] = outputModeText(mode);
  const notify: Record<string, Json> = {};
  for (const [event, entries] of Object.entries(job.notify)) notify[event] = (entries ?? []).map(notifyView);
  return {
    description: job.description,
    command: Array.isArray(job.command) ? [...job.command] : job.command,
    frequency: frequencyLabel(job),
    time: s.time ? `${pad(s.time.hour)}${pad(s.time.minute)}` : null,
    weekday: s.weekday,
    day_of_month: s.dayOfMonth,
    timezone: s.timezone,
    exclude: s.exclude ? { dates: [...s.exclude.dates], calendars: s.exclude.calendars.map((c) => c.name) } : null,
    depends_on: [...job.dependsOn],
    timeout: job.timeoutMs === null ? null : formatDuration(job.timeoutMs),
    sla: job.slaMs === null ? null : formatDuration(job.slaMs),
    tags: [...job.tags],
    on_failure: job.onFailure,
    retries: job.retries,
    retry_delay: job.retryDelay.kind === "fixed" ? `fixed:${formatDuration(job.retryDelay.ms)}` : "exponential",
    concurrency: job.concurrency,
    catchup: job.catchup,
    env,
    healthcheck: job.healthcheck
      ? { command: job.healthcheck.command, timeout: formatDuration(job.healthcheck.timeoutMs), on_fail: job.healthcheck.onFail }
      : null,
    output,
    notify,
    params: paramsView(job.params, redact),
  };
}

/** The declarations in the YAML vocabulary; a secret param's default reads *** when redacting. */
export function paramsView(params: Readonly<Record<string, ParamSpec>>, redact = true): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const p of Object.values(params)) {
    out[p.name] = {
      type: p.type,
      default: p.default === null ? null : p.secret && redact ? REDACTED : p.default,
      required: p.required,
      values: p.values === null ? null : [...p.values],
      pattern: p.pattern,
      description: p.description,
      secret: p.secret,
    };
  }
  return out;
}

export function outputModeText(mode: OutputMode): string {
  switch (mode.kind) {
    case "json_field":
      return `json_field:${mode.key}`;
    case "regex":
      return `regex:${mode.pattern}`;
    default:
      return mode.kind;
  }
}

function notifyView(e: NotifyEntry): Json {
  return {
    channel: e.channel,
    message: e.message,
    attach_logs: e.attachLogs === null ? null : e.attachLogs === "all" ? "all" : `last_${e.attachLogs.lastLines}_lines`,
    only_after_failure: e.onlyAfterFailure,
  };
}

/** svcd.yaml with defaults applied; token, password hashes and global_env values `***`. */
export function daemonView(c: DaemonConfig): Record<string, Json> {
  const secret = (v: string | null): Json => (v === null ? null : REDACTED);
  const d = formatDuration;
  const globalEnv: Record<string, Json> = {};
  for (const k of Object.keys(c.executor.globalEnv)) globalEnv[k] = REDACTED;
  const rbac: Record<string, Json> = {};
  for (const [role, rules] of Object.entries(c.auth.rbac)) rbac[role] = [...rules];
  const oidc = c.auth.oidc as Record<string, string | null> | null;
  const view: Record<string, Json> = {
    api: {
      addr: c.api.addr,
      base_path: c.api.basePath,
      tls: {
        enabled: c.api.tls.enabled,
        cert: c.api.tls.cert,
        key: c.api.tls.key,
        min_version: c.api.tls.minVersion,
        client_ca: c.api.tls.clientCa,
      },
      cors: { allowed_origins: [...c.api.cors.allowedOrigins], allow_credentials: c.api.cors.allowCredentials },
      timeouts: {
        read_header: d(c.api.timeouts.readHeaderMs),
        read: d(c.api.timeouts.readMs),
        write: d(c.api.timeouts.writeMs),
        idle: d(c.api.timeouts.idleMs),
      },
    },
    auth: {
      type: c.auth.type,
      bearer: { token_file: c.auth.bearer.tokenFile, token: secret(c.auth.bearer.token) },
      basic: { users: c.auth.basic.users.map((u) => ({ username: u.username, password_hash: REDACTED, role: u.role })) },
      oidc:
        oidc === null
          ? null
          : {
              issuer: oidc.issuer ?? null,
              client_id: oidc.clientId ?? null,
              audience: oidc.audience ?? null,
              jwks_uri: oidc.jwksUri ?? null,
              role_claim: oidc.roleClaim ?? null,
              default_role: oidc.defaultRole ?? null,
            },
      rbac,
    },
    log: {
      level: c.log.level,
      format: c.log.format,
      output: c.log.output,
      file: {
        path: c.log.file.path,
        max_size_mb: c.log.file.maxSizeMb,
        max_backups: c.log.file.maxBackups,
        max_age_days: c.log.file.maxAgeDays,
        compress: c.log.file.compress,
      },
      audit_log: {
        enabled: c.log.auditLog.enabled,
        path: c.log.auditLog.path,
        max_size_mb: c.log.auditLog.maxSizeMb,
        max_backups: c.log.auditLog.maxBackups,
      },
    },
    storage: {
      engine: c.storage.engine,
      sqlite: {
        path: c.storage.sqlite.path,
        wal_autocheckpoint: c.storage.sqlite.walAutocheckpoint,
        busy_timeout: d(c.storage.sqlite.busyTimeoutMs),
      },
      retention: {
        max_age: c.storage.retention.maxAgeMs === null ? null : d(c.storage.retention.maxAgeMs),
        max_runs_per_job: c.storage.retention.maxRunsPerJob,
        interval: d(c.storage.retention.intervalMs),
      },
    },
    scheduler: {
      max_concurrent_jobs: c.scheduler.maxConcurrentJobs,
      catchup_window: d(c.scheduler.catchupWindowMs),
      shutdown_timeout: d(c.scheduler.shutdownTimeoutMs),
      schedule_jitter: d(c.scheduler.scheduleJitterMs),
    },
    executor: {
      pool_size: c.executor.poolSize,
      shell: c.executor.shell,
      global_env: globalEnv,
      kill_grace: d(c.executor.killGraceMs),
    },
    metrics: { enabled: c.metrics.enabled },
  };
  return hideExposed(view, c.exposedSecrets);
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}
