/**
 * svcd.yaml -> DaemonConfig with every default applied (defaults come from
 * the schema). A missing file means all defaults. `auth.type: oidc` and
 * `storage.engine: postgres` are accepted here; the daemon refuses them at
 * start.
 */
import { dirname, isAbsolute, resolve } from "node:path";
import type { BasicUser, DaemonConfig, LoadResult, LogLevel } from "./types.js";
import { parseDuration } from "./duration.js";
import { resolveEnvRefs } from "./env.js";
import { finalize, IssueList, type PathSeg } from "./issues.js";
import { readConfigText } from "./readText.js";
import { schemaDefault } from "./schema/jsonSchema.js";
import { svcdSchema } from "./schema/svcdSchema.js";
import { schemaIssues } from "./schemaCheck.js";
import { asDict, deepFreeze, isDict, isInt, isString, type Dict } from "./values.js";
import { parseYamlText } from "./yamlSource.js";
import { exposedSecrets } from "./redactText.js";

/** Built-in roles (CONTRACT §5); a configured role replaces the one of the same name. */
export const DEFAULT_RBAC: Readonly<Record<string, readonly string[]>> = Object.freeze({
  viewer: Object.freeze(["GET /**"]),
  operator: Object.freeze([
    "GET /**",
    "POST /api/jobs/**",
    "POST /api/db/alerts/*/retry",
    "POST /api/integrations/*/test",
  ]),
  admin: Object.freeze(["* /**"]),
});

const BCRYPT = /^\$2[aby]\$[0-9]{2}\$[./A-Za-z0-9]{53}$/;

/** Loads svcd.yaml; `null` (no file) gives all defaults. Never throws. */
export function loadDaemonConfig(file: string | null, env: NodeJS.ProcessEnv = process.env): LoadResult<DaemonConfig> {
  if (file === null) return parseDaemonText("", null, env);
  const abs = resolve(file);
  const read = readConfigText(abs);
  if (!read.ok) {
    return {
      ok: false,
      errors: [{ file: abs, line: read.line, column: read.column, path: "", message: read.message }],
      warnings: [],
    };
  }
  return parseDaemonText(read.text, abs, env);
}

/** Parses svcd.yaml text as if it were `file` (relative paths resolve against its directory). */
export function parseDaemonText(
  text: string,
  file: string | null,
  env: NodeJS.ProcessEnv = process.env,
): LoadResult<DaemonConfig> {
  const abs = file === null ? null : resolve(file);
  const shown = abs ?? "svcd.yaml";
  try {
    const parsed = parseYamlText(text);
    if (!parsed.ok) return { ok: false, errors: finalize(parsed.issues, shown, null), warnings: [] };
    const issues = new IssueList();
    // An empty file (or none) is all defaults: nothing for the schema to check.
    if (parsed.value !== null && parsed.value !== undefined) issues.errors.push(...schemaIssues("svcd", parsed.value));
    const config = buildDaemon(asDict(parsed.value), abs, env, issues);
    if (parsed.aliased) config.exposedSecrets = exposedSecrets("svcd.yaml", text);
    if (issues.errors.length === 0 && issues.warnings.length === 0) return { ok: true, value: deepFreeze(config), warnings: [] };
    const locate = parsed.locator();
    const errors = finalize(issues.errors, shown, locate).sort((a, b) => a.line - b.line || a.column - b.column);
    const warnings = finalize(issues.warnings, shown, locate);
    if (errors.length > 0) return { ok: false, errors, warnings };
    return { ok: true, value: deepFreeze(config), warnings };
  } catch (e) {
    const message = `internal error while loading: ${e instanceof Error ? e.message : String(e)}`;
    return { ok: false, errors: [{ file: shown, line: 0, column: 0, path: "", message }], warnings: [] };
  }
}

const dflt = (...path: string[]): unknown => schemaDefault(svcdSchema, path);
/** setTimeout's longest wait (2^31 - 1 ms, about 24.8 days); longer ones fire at once. */
const MAX_TIMER_MS = 24 * 86_400_000;
const durationDefault = (...path: string[]): number => parseDuration(dflt(...path) as string)!;

function buildDaemon(root: Dict, file: string | null, env: NodeJS.ProcessEnv, issues: IssueList): DaemonConfig {
  const baseDir = file === null ? process.cwd() : dirname(file);
  const sec = (...path: string[]): Dict => {
    let node: unknown = root;
    for (const p of path) node = asDict(node)[p];
    return asDict(node);
  };
  const str = (d: Dict, key: string): string | null => (isString(d[key]) && d[key] !== "" ? (d[key] as string) : null);
  const filePath = (d: Dict, key: string): string | null => {
    const v = str(d, key);
    return v === null ? null : isAbsolute(v) ? v : resolve(baseDir, v);
  };
  const int = (d: Dict, key: string, path: string[]): number => (isInt(d[key], 0, Number.MAX_SAFE_INTEGER) ? (d[key] as number) : (dflt(...path) as number));
  const bool = (d: Dict, key: string, path: string[]): boolean => (typeof d[key] === "boolean" ? (d[key] as boolean) : (dflt(...path) as boolean));
  const dur = (d: Dict, key: string, path: string[]): number => {
    const v = isString(d[key]) ? parseDuration(d[key] as string) : null;
    return v ?? durationDefault(...path);
  };
  const optDur = (d: Dict, key: string): number | null => (isString(d[key]) ? parseDuration(d[key] as string) : null);
  /** A duration a timer waits for: Node's timers cannot wait longer than 24.8 days (they fire at once). */
  const timerDur = (d: Dict, key: string, path: string[]): number => {
    const v = dur(d, key, path);
    if (v > MAX_TIMER_MS) {
      issues.error(path, "must be at most 24d (a timer cannot wait longer)");
      return durationDefault(...path);
    }
    return v;
  };
  const oneOf = <T extends string>(d: Dict, key: string, allowed: readonly T[], path: string[]): T =>
    isString(d[key]) && (allowed as readonly string[]).includes(d[key] as string) ? (d[key] as T) : (dflt(...path) as T);

  // api
  const api = sec("api");
  const addr = str(api, "addr");
  if (addr !== null && !isHostPort(addr)) {
    issues.error(["api", "addr"], "must be host:port, like 127.0.0.1:8420, 0.0.0.0:8420 or [::1]:8420 (port 0-65535)");
  }
  const basePath = isString(api.base_path) ? api.base_path.replace(/\/+$/, "") : (dflt("api", "base_path") as string);
  const tls = sec("api", "tls");
  const tlsEnabled = bool(tls, "enabled", ["api", "tls", "enabled"]);
  if (tlsEnabled) {
    for (const key of ["cert", "key"]) {
      if (str(tls, key) === null) issues.error(["api", "tls", key], `api.tls.${key} is required when api.tls.enabled is true`);
    }
  }
  const minVersion = tls.min_version === undefined || tls.min_version === null ? (dflt("api", "tls", "min_version") as string) : String(tls.min_version);
  const cors = sec("api", "cors");
  const origins = Array.isArray(cors.allowed_origins) ? cors.allowed_origins.filter(isString) : [];
  origins.forEach((o, i) => {
    if (o === "*") issues.warn(["api", "cors", "allowed_origins", i], 'allowed origin "*" lets any web page call the API');
  });
  const timeouts = sec("api", "timeouts");

  // auth
  const auth = sec("auth");
  const authType = oneOf(auth, "type", ["none", "bearer", "basic", "oidc"] as const, ["auth", "type"]);
  const bearer = sec("auth", "bearer");
  const token = secret(bearer.token, ["auth", "bearer", "token"], env, issues);
  if (token !== null) {
    issues.warn(["auth", "bearer", "token"], "inline bearer token: prefer auth.bearer.token_file (one token per line, re-read on reload)");
  }
  const tokenFile = filePath(bearer, "token_file");
  if (authType === "bearer" && tokenFile === null && !isString(bearer.token)) {
    issues.error(["auth", "bearer"], "auth.type bearer needs auth.bearer.token_file or auth.bearer.token");
  }
  const usersRaw = sec("auth", "basic").users;
  const users = basicUsers(usersRaw, env, issues);
  if (authType === "basic" && (!Array.isArray(usersRaw) || usersRaw.length === 0)) {
    issues.error(["auth", "basic", "users"], "auth.type basic needs at least one user in auth.basic.users");
  }
  const oidcRaw = auth.oidc;
  const oidc = isDict(oidcRaw)
    ? {
        issuer: str(oidcRaw, "issuer"),
        clientId: str(oidcRaw, "client_id"),
        audience: str(oidcRaw, "audience"),
        jwksUri: str(oidcRaw, "jwks_uri"),
        roleClaim: str(oidcRaw, "role_claim"),
        defaultRole: str(oidcRaw, "default_role"),
      }
    : null;
  const rbac: Record<string, string[]> = {};
  for (const [role, rules] of Object.entries(DEFAULT_RBAC)) rbac[role] = [...rules];
  for (const [role, rules] of Object.entries(asDict(auth.rbac))) {
    if (Array.isArray(rules)) rbac[role] = rules.filter(isString);
  }

  // log
  const log = sec("log");
  const logFile = sec("log", "file");
  const audit = sec("log", "audit_log");
  const output = oneOf(log, "output", ["stdout", "stderr", "file"] as const, ["log", "output"]);

  // storage
  const storage = sec("storage");
  const sqlite = sec("storage", "sqlite");
  const retention = sec("storage", "retention");
  const maxAge = optDur(retention, "max_age");
  if (maxAge === 0) issues.error(["storage", "retention", "max_age"], "must be greater than 0 (remove it to keep runs forever)");
  const retentionEvery = dur(retention, "interval", ["storage", "retention", "interval"]);
  if (retentionEvery === 0) issues.error(["storage", "retention", "interval"], "must be greater than 0 (it is how often old runs are pruned; the default is 24h)");
  if (retentionEvery > MAX_TIMER_MS) issues.error(["storage", "retention", "interval"], "must be at most 24d (a timer cannot wait longer)");

  const scheduler = sec("scheduler");
  const executor = sec("executor");
  const metrics = sec("metrics");
  const globalEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(asDict(executor.global_env))) if (isString(v)) globalEnv[k] = v;

  return {
    file,
    exposedSecrets: [],
    api: {
      addr,
      basePath,
      tls: {
        enabled: tlsEnabled,
        cert: filePath(tls, "cert"),
        key: filePath(tls, "key"),
        minVersion: minVersion === "1.3" ? "1.3" : "1.2",
        clientCa: filePath(tls, "client_ca"),
      },
      cors: { allowedOrigins: origins, allowCredentials: bool(cors, "allow_credentials", ["api", "cors", "allow_credentials"]) },
      timeouts: {
        readHeaderMs: timerDur(timeouts, "read_header", ["api", "timeouts", "read_header"]),
        readMs: timerDur(timeouts, "read", ["api", "timeouts", "read"]),
        writeMs: timerDur(timeouts, "write", ["api", "timeouts", "write"]),
        idleMs: timerDur(timeouts, "idle", ["api", "timeouts", "idle"]),
      },
    },
    auth: {
      type: authType,
      bearer: { tokenFile, token },
      basic: { users },
      oidc,
      rbac,
    },
    log: {
      level: oneOf(log, "level", ["debug", "info", "warn", "error"] as const, ["log", "level"]) as LogLevel,
      format: oneOf(log, "format", ["json", "text"] as const, ["log", "format"]),
      output,
      file: {
        path: filePath(logFile, "path"),
        maxSizeMb: int(logFile, "max_size_mb", ["log", "file", "max_size_mb"]),
        maxBackups: int(logFile, "max_backups", ["log", "file", "max_backups"]),
        maxAgeDays: int(logFile, "max_age_days", ["log", "file", "max_age_days"]),
        compress: bool(logFile, "compress", ["log", "file", "compress"]),
      },
      auditLog: {
        enabled: bool(audit, "enabled", ["log", "audit_log", "enabled"]),
        path: filePath(audit, "path"),
        maxSizeMb: int(audit, "max_size_mb", ["log", "audit_log", "max_size_mb"]),
        maxBackups: int(audit, "max_backups", ["log", "audit_log", "max_backups"]),
      },
    },
    storage: {
      engine: oneOf(storage, "engine", ["sqlite", "postgres"] as const, ["storage", "engine"]),
      sqlite: {
        path: filePath(sqlite, "path"),
        walAutocheckpoint: int(sqlite, "wal_autocheckpoint", ["storage", "sqlite", "wal_autocheckpoint"]),
        busyTimeoutMs: dur(sqlite, "busy_timeout", ["storage", "sqlite", "busy_timeout"]),
      },
      retention: {
        maxAgeMs: maxAge === 0 ? null : maxAge,
        maxRunsPerJob: isInt(retention.max_runs_per_job, 1, Number.MAX_SAFE_INTEGER) ? retention.max_runs_per_job : null,
        intervalMs: retentionEvery > 0 && retentionEvery <= MAX_TIMER_MS ? retentionEvery : durationDefault("storage", "retention", "interval"),
      },
    },
    scheduler: {
      maxConcurrentJobs: int(scheduler, "max_concurrent_jobs", ["scheduler", "max_concurrent_jobs"]),
      catchupWindowMs: dur(scheduler, "catchup_window", ["scheduler", "catchup_window"]),
      shutdownTimeoutMs: dur(scheduler, "shutdown_timeout", ["scheduler", "shutdown_timeout"]),
      scheduleJitterMs: dur(scheduler, "schedule_jitter", ["scheduler", "schedule_jitter"]),
    },
    executor: {
      poolSize: int(executor, "pool_size", ["executor", "pool_size"]),
      shell: str(executor, "shell") ?? (dflt("executor", "shell") as string),
      globalEnv,
      killGraceMs: timerDur(executor, "kill_grace", ["executor", "kill_grace"]),
    },
    metrics: { enabled: bool(metrics, "enabled", ["metrics", "enabled"]) },
  };
}

/** A secret field that may be `${env:VAR}`; an unset variable is an error (auth would not work). */
function secret(value: unknown, path: PathSeg[], env: NodeJS.ProcessEnv, issues: IssueList): string | null {
  if (!isString(value) || value === "") return null;
  const r = resolveEnvRefs(value, env, {});
  if ("unset" in r) {
    issues.error(path, `\${env:${r.unset}} is not set in the daemon's environment`);
    return null;
  }
  if (r.value === "") {
    issues.error(path, `${value} is set to an empty value in the daemon's environment: no request could match it`);
    return null;
  }
  return r.value;
}

function basicUsers(raw: unknown, env: NodeJS.ProcessEnv, issues: IssueList): BasicUser[] {
  if (!Array.isArray(raw)) return [];
  const users: BasicUser[] = [];
  const seen = new Set<string>();
  raw.forEach((u, i) => {
    if (!isDict(u) || !isString(u.username)) return;
    const at: PathSeg[] = ["auth", "basic", "users", i];
    if (seen.has(u.username)) issues.error([...at, "username"], `duplicate user "${u.username}"`);
    seen.add(u.username);
    const hash = secret(u.password_hash, [...at, "password_hash"], env, issues);
    if (hash === null) {
      // Empty (or a variable that is not set, reported above): no one could sign in as this user.
      if (u.password_hash === "") issues.error([...at, "password_hash"], "is empty: give the user's bcrypt hash");
      return;
    }
    if (!BCRYPT.test(hash)) {
      // Never echo the value: it may be a plaintext password.
      issues.error(
        [...at, "password_hash"],
        "must be a bcrypt hash ($2a$, $2b$ or $2y$, 60 characters); plaintext passwords are rejected. " +
          `Make one with: htpasswd -nbBC 12 "" 'your-password' | tr -d ':\\n'`,
      );
      return;
    }
    users.push({ username: u.username, passwordHash: hash, role: isString(u.role) && u.role !== "" ? u.role : "admin" });
  });
  return users;
}

function isHostPort(addr: string): boolean {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]*):([0-9]{1,5})$/.exec(addr);
  return m !== null && Number(m[2]) <= 65535;
}
