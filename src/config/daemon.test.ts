import { join } from "node:path";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { loadDaemonConfig, parseDaemonText, DEFAULT_RBAC } from "./daemon.js";
import { daemonView } from "./views.js";
import { redactConfigText } from "./redactText.js";
import { errorsOf, issueAt, lineOf, tempProject, valueOf } from "./testkit.js";

const FILE = "/etc/svc/svcd.yaml";
const parse = (text: string, env: NodeJS.ProcessEnv = {}) => parseDaemonText(text, FILE, env);
const HASH = "$2b$12$" + "a".repeat(53);

describe("svcd.yaml defaults", () => {
  it("a missing file or an empty one means every SPEC default", () => {
    for (const r of [loadDaemonConfig(null, {}), parse(""), parse("api:\nauth:\n")]) {
      const c = valueOf(r);
      expect(c.api).toEqual({
        addr: null,
        basePath: "",
        tls: { enabled: false, cert: null, key: null, minVersion: "1.2", clientCa: null },
        cors: { allowedOrigins: [], allowCredentials: false },
        timeouts: { readHeaderMs: 10_000, readMs: 30_000, writeMs: 60_000, idleMs: 120_000 },
      });
      expect(c.auth).toMatchObject({ type: "none", bearer: { tokenFile: null, token: null }, basic: { users: [] }, oidc: null });
      expect(c.auth.rbac).toEqual(DEFAULT_RBAC);
      expect(c.log).toEqual({
        level: "info",
        format: "text",
        output: "stdout",
        file: { path: null, maxSizeMb: 50, maxBackups: 5, maxAgeDays: 30, compress: false },
        auditLog: { enabled: false, path: null, maxSizeMb: 50, maxBackups: 5 },
      });
      expect(c.storage).toEqual({
        engine: "sqlite",
        sqlite: { path: null, walAutocheckpoint: 1000, busyTimeoutMs: 5000 },
        retention: { maxAgeMs: null, maxRunsPerJob: null, intervalMs: 86_400_000 },
      });
      expect(c.scheduler).toEqual({ maxConcurrentJobs: 32, catchupWindowMs: 86_400_000, shutdownTimeoutMs: 60_000, scheduleJitterMs: 0 });
      expect(c.executor).toEqual({ poolSize: 8, shell: "/bin/sh", globalEnv: {}, killGraceMs: 10_000 });
    }
    expect(valueOf(loadDaemonConfig(null, {})).file).toBeNull();
  });

  it("reads every key", () => {
    const text = [
      "api:",
      "  addr: 0.0.0.0:8420",
      "  base_path: /svc/",
      "  tls: {enabled: true, cert: certs/cert.pem, key: /abs/key.pem, min_version: 1.3, client_ca: ca.pem}",
      "  cors: {allowed_origins: ['https://a.example'], allow_credentials: true}",
      "  timeouts: {read_header: 5s, read: 1m, write: 2m, idle: 0s}",
      "auth:",
      "  type: basic",
      "  basic:",
      `    users: [{username: ann, password_hash: '${HASH}', role: viewer}, {username: bob, password_hash: '${HASH}'}]`,
      "  rbac:",
      "    viewer: ['GET /api/jobs/**']",
      "    auditor: ['GET /api/audit']",
      "log:",
      "  level: debug",
      "  format: json",
      "  output: file",
      "  file: {path: logs/svcd.log, max_size_mb: 10, max_backups: 2, max_age_days: 7, compress: true}",
      "  audit_log: {enabled: true, path: audit.ndjson, max_size_mb: 5, max_backups: 1}",
      "storage:",
      "  sqlite: {path: db/svc.db, wal_autocheckpoint: 500, busy_timeout: 2s}",
      "  retention: {max_age: 30d, max_runs_per_job: 100, interval: 5m}",
      "scheduler: {max_concurrent_jobs: 4, catchup_window: 1h, shutdown_timeout: 5m, schedule_jitter: 30s}",
      "executor: {pool_size: 2, shell: /bin/bash, global_env: {TZ: UTC}, kill_grace: 3s}",
    ].join("\n");
    const c = valueOf(parse(text));
    expect(c.file).toBe(FILE);
    expect(c.api).toMatchObject({ addr: "0.0.0.0:8420", basePath: "/svc" });
    expect(c.api.tls).toEqual({ enabled: true, cert: "/etc/svc/certs/cert.pem", key: "/abs/key.pem", minVersion: "1.3", clientCa: "/etc/svc/ca.pem" });
    expect(c.api.timeouts).toEqual({ readHeaderMs: 5000, readMs: 60_000, writeMs: 120_000, idleMs: 0 });
    expect(c.auth.basic.users).toEqual([
      { username: "ann", passwordHash: HASH, role: "viewer" },
      { username: "bob", passwordHash: HASH, role: "admin" },
    ]);
    expect(c.auth.rbac).toEqual({ ...DEFAULT_RBAC, viewer: ["GET /api/jobs/**"], auditor: ["GET /api/audit"] });
    expect(c.log.file.path).toBe("/etc/svc/logs/svcd.log");
    expect(c.log.auditLog).toEqual({ enabled: true, path: "/etc/svc/audit.ndjson", maxSizeMb: 5, maxBackups: 1 });
    expect(c.storage.sqlite).toEqual({ path: "/etc/svc/db/svc.db", walAutocheckpoint: 500, busyTimeoutMs: 2000 });
    expect(c.storage.retention).toEqual({ maxAgeMs: 30 * 86_400_000, maxRunsPerJob: 100, intervalMs: 300_000 });
    expect(c.scheduler).toEqual({ maxConcurrentJobs: 4, catchupWindowMs: 3_600_000, shutdownTimeoutMs: 300_000, scheduleJitterMs: 30_000 });
    expect(c.executor).toEqual({ poolSize: 2, shell: "/bin/bash", globalEnv: { TZ: "UTC" }, killGraceMs: 3000 });
  });

  it("accepts auth.type oidc and storage.engine postgres (the daemon refuses them at start)", () => {
    const text = "auth:\n  type: oidc\n  oidc: {issuer: https://id.example, client_id: svc, audience: svc, jwks_uri: https://id.example/jwks, role_claim: role, default_role: viewer}\nstorage:\n  engine: postgres\n";
    const c = valueOf(parse(text));
    expect(c.auth.type).toBe("oidc");
    expect(c.auth.oidc).toMatchObject({ issuer: "https://id.example", clientId: "svc", defaultRole: "viewer" });
    expect(c.storage.engine).toBe("postgres");
  });
});

describe("svcd.yaml rejections, with field path and line", () => {
  it("unknown fields, at every depth", () => {
    const text = "api:\n  adr: 127.0.0.1:1\nscheduler:\n  max_jobs: 3\nfrobnicate: true\n";
    const errors = errorsOf(parse(text));
    expect(issueAt(errors, "/api/adr")).toMatchObject({ line: 2, message: 'unknown field "adr" (did you mean "addr"?)' });
    expect(issueAt(errors, "/scheduler/max_jobs").line).toBe(4);
    expect(issueAt(errors, "/frobnicate").line).toBe(5);
    expect(errors.every((e) => e.file === FILE)).toBe(true);
  });

  it("plaintext password_hash, without echoing it", () => {
    const text = `auth:\n  type: basic\n  basic:\n    users:\n      - username: ann\n        password_hash: hunter2\n`;
    const e = issueAt(errorsOf(parse(text)), "/auth/basic/users/0/password_hash");
    expect(e.line).toBe(lineOf(text, "password_hash"));
    expect(e.message).toMatch(/bcrypt/);
    expect(e.message).not.toContain("hunter2");
  });

  it("password_hash and token may come from ${env:VAR}; unset is an error", () => {
    const text = `auth:\n  type: bearer\n  bearer:\n    token: \${env:SVC_API_TOKEN}\n  basic:\n    users: [{username: a, password_hash: '\${env:HASH}'}]\n`;
    const ok = valueOf(parse(text, { SVC_API_TOKEN: "t0k", HASH }));
    expect(ok.auth.bearer.token).toBe("t0k");
    expect(ok.auth.basic.users[0]!.passwordHash).toBe(HASH);
    const errors = errorsOf(parse(text, {}));
    expect(issueAt(errors, "/auth/bearer/token").message).toMatch(/SVC_API_TOKEN/);
    expect(issueAt(errors, "/auth/basic/users/0/password_hash").line).toBe(6);
  });

  it("an empty password_hash, or a token from a variable set empty, is an error, not a user or token no one can use", () => {
    const errors = errorsOf(parse(`auth:\n  type: basic\n  basic:\n    users: [{username: a, password_hash: ""}]\n`));
    expect(issueAt(errors, "/auth/basic/users/0/password_hash").message).toBe("is empty: give the user's bcrypt hash");
    const empty = errorsOf(parse(`auth:\n  type: bearer\n  bearer:\n    token: \${env:T}\n`, { T: "" }));
    expect(issueAt(empty, "/auth/bearer/token").message).toBe("${env:T} is set to an empty value in the daemon's environment: no request could match it");
  });

  it("a duration a timer waits for is at most 24d (Node's timers fire at once past 24.8 days)", () => {
    const errors = errorsOf(parse("executor:\n  kill_grace: 30d\nscheduler:\n  shutdown_timeout: 25d\napi:\n  timeouts: {idle: 100d}\n"));
    expect(errors.map((e) => e.path)).not.toContain("/scheduler/shutdown_timeout"); // waits on the clock's long timers
    for (const p of ["/executor/kill_grace", "/api/timeouts/idle"]) {
      expect(issueAt(errors, p).message).toBe("must be at most 24d (a timer cannot wait longer)");
    }
    expect(valueOf(parse("executor:\n  kill_grace: 24d\n")).executor.killGraceMs).toBe(24 * 86_400_000);
  });

  it("semantic rules: tls needs cert and key, bearer needs a token, addr is host:port", () => {
    const errors = errorsOf(parse("api:\n  addr: localhost\n  tls: {enabled: true}\nauth: {type: bearer}\n"));
    expect(issueAt(errors, "/api/addr").line).toBe(2);
    expect(issueAt(errors, "/api/tls/cert").message).toMatch(/required when api.tls.enabled/);
    expect(issueAt(errors, "/api/tls/key").line).toBe(3);
    expect(issueAt(errors, "/auth/bearer").message).toMatch(/token_file or auth.bearer.token/);
  });

  it("value errors: enums, ranges, durations, rbac rules", () => {
    const text = [
      "api: {tls: {min_version: '1.1'}}",
      "log: {level: verbose}",
      "scheduler: {max_concurrent_jobs: 0, catchup_window: forever}",
      "auth: {rbac: {viewer: ['FETCH /x']}}",
    ].join("\n");
    const errors = errorsOf(parse(text));
    expect(issueAt(errors, "/api/tls/min_version").message).toMatch(/"1.2" or "1.3"/);
    expect(issueAt(errors, "/log/level").line).toBe(2);
    expect(issueAt(errors, "/scheduler/max_concurrent_jobs").line).toBe(3);
    expect(issueAt(errors, "/scheduler/catchup_window").message).toMatch(/duration/);
    expect(issueAt(errors, "/auth/rbac/viewer/0").message).toMatch(/METHOD \/path/);
  });

  it("storage.retention.interval: a duration greater than 0", () => {
    expect(issueAt(errorsOf(parse("storage:\n  retention:\n    interval: 0s\n")), "/storage/retention/interval")).toMatchObject({
      line: 3,
      message: "must be greater than 0 (it is how often old runs are pruned; the default is 24h)",
    });
    expect(issueAt(errorsOf(parse("storage:\n  retention:\n    interval: often\n")), "/storage/retention/interval").message).toMatch(/duration/);
    expect(issueAt(errorsOf(parse("storage:\n  retention:\n    interval: 30d\n")), "/storage/retention/interval").message).toBe("must be at most 24d (a timer cannot wait longer)");
    expect(valueOf(parse("storage:\n  retention:\n    interval: 24d\n")).storage.retention.intervalMs).toBe(24 * 86_400_000);
  });

  it("strict warnings: inline bearer token and * CORS origin", () => {
    const r = parse("api:\n  cors:\n    allowed_origins: ['*']\nauth:\n  type: bearer\n  bearer: {token: abc}\n");
    expect(r.ok).toBe(true);
    expect(issueAt(r.warnings, "/api/cors/allowed_origins/0").line).toBe(3);
    expect(issueAt(r.warnings, "/auth/bearer/token").message).toMatch(/token_file/);
  });

  it("a --daemon-config path that does not exist is an error", () => {
    const dir = tempProject();
    expect(errorsOf(loadDaemonConfig(join(dir, "svcd.yaml")))[0]!.message).toMatch(/no such file/);
  });
});

describe("daemon views", () => {
  const text = [
    "# svcd.yaml",
    "auth:",
    "  type: bearer",
    "  bearer:",
    "    token: s3cr3t-token   # inline",
    "    token_file: /etc/svc/tokens",
    "  basic:",
    "    users:",
    `      - {username: ann, password_hash: '${HASH}', role: viewer}`,
    "      - username: bob",
    `        password_hash: "${HASH}"`,
    "  # token: commented-out-secret",
    "executor:",
    "  global_env:",
    "    API_KEY: k3y",
    "    REGION: eu",
    "  shell: /bin/sh",
    "api:",
    "  addr: ${env:SVC_ADDR}",
  ].join("\n");

  it("daemonView redacts token, hashes and global_env values", () => {
    const view = daemonView(valueOf(parse(text.replace("${env:SVC_ADDR}", "127.0.0.1:1"))));
    const json = JSON.stringify(view);
    for (const secret of ["s3cr3t-token", HASH, "k3y"]) expect(json).not.toContain(secret);
    expect(view.scheduler).toEqual({ max_concurrent_jobs: 32, catchup_window: "1d", shutdown_timeout: "1m", schedule_jitter: "0s" });
    expect((view.auth as { bearer: unknown }).bearer).toEqual({ token_file: "/etc/svc/tokens", token: "***" });
  });

  it("daemonView hides a secret anchored in a plain field and aliased into a secret one", () => {
    const anchored = "api:\n  cors: {allowed_origins: [&t 'https://s3cret.example']}\nexecutor:\n  global_env: {ORIGIN: *t}\n";
    const config = valueOf(parse(anchored));
    expect(config.exposedSecrets).toEqual(["https://s3cret.example"]);
    const view = daemonView(config);
    expect(JSON.stringify(view)).not.toContain("s3cret");
    expect((view.api as { cors: unknown }).cors).toEqual({ allowed_origins: ["***"], allow_credentials: false });
    expect(config.api.cors.allowedOrigins).toEqual(["https://s3cret.example"]);
  });

  it("redactConfigText keeps every line and hides secret values", () => {
    const r = redactConfigText("svcd.yaml", text);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const out = r.text;
    expect(out.split("\n")).toHaveLength(text.split("\n").length);
    for (const secret of ["s3cr3t-token", HASH, "k3y", "eu", "commented-out-secret", "${env:SVC_ADDR}"]) {
      expect(out).not.toContain(secret);
    }
    const lines = out.split("\n");
    expect(lines[4]).toBe('    token: "***"   # inline');
    expect(lines[5]).toBe("    token_file: /etc/svc/tokens");
    expect(lines[8]).toBe(`      - {username: ann, password_hash: "***", role: viewer}`);
    expect(lines[16]).toBe("  shell: /bin/sh");
    expect(lines[18]).toBe('  addr: "***"');
    expect(YAML.parse(out)).toMatchObject({ auth: { bearer: { token: "***" } } });
  });
});
