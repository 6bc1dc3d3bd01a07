/**
 * No secret leaves svcd, whatever YAML form it is written in (CONTRACT §5,
 * §7.5), through the built binaries:
 * - the example of issue 18, fixed: a bearer token on the line after its
 *   key, a global_env value on the next line, a job env value;
 * - a property: random configs with random secrets in random YAML forms
 *   (test/helpers/secretConfigs.ts), loaded one after the other into one
 *   real svcd by reload; for each, every job is run, and no secret shows in
 *   any /api/config*, /api/jobs*, /api/runs* (and audit, db, integrations)
 *   answer, `svc config show`, `svc validate`, `svc export`, an error
 *   answer (a rejected validate, save and reload), the daemon's output,
 *   its log file or the audit log. Only `?raw=1` for an admin holds them.
 *
 * Replay: SVC_SECRETS_SEED=<seed printed below> npx vitest run test/e2e/secrets-redaction.test.ts
 * (SVC_SECRETS_E2E_RUNS sets how many configs; default 6).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, project, startDaemon, until, type DaemonProc } from "../helpers/daemonKit.js";
import { configArb, MARK, type GeneratedConfig } from "../helpers/secretConfigs.js";
import { runSvc } from "./helpers/cli.js";

const SEED = Number(process.env.SVC_SECRETS_SEED ?? Date.now() % 1_000_000);
const RUNS = Number(process.env.SVC_SECRETS_E2E_RUNS ?? 6);

/** Text that must not hold a secret, with where it came from (for the failure message). */
type Seen = { where: string; text: string };

function expectNoSecret(seen: readonly Seen[], secrets: readonly string[]): void {
  for (const { where, text } of seen) {
    for (const s of secrets) {
      if (text.includes(s)) throw new Error(`${where} holds the secret ${JSON.stringify(s)}:\n${text.slice(0, 4000)}`);
    }
  }
}

describe("the example of issue 18, through the built binaries", () => {
  const DAEMON = "auth:\n  type: bearer\n  bearer:\n    token:\n      s3cretTokenValue\nexecutor:\n  global_env:\n    API_KEY:\n      hunter2\n";
  const SVC = 'jobs:\n  hello:\n    command: echo hello\n    frequency: manual\n    env: {DB_PASSWORD: "plain-job-secret-123"}\n';
  const SECRETS = ["s3cretTokenValue", "hunter2", "plain-job-secret-123"];
  let dir: string;
  let d: DaemonProc;

  beforeAll(async () => {
    dir = project(SVC, { daemon: DAEMON });
    d = await startDaemon(dir);
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
    if (dir) cleanup(dir);
  });

  it("GET /api/config/daemon and /api/config/source read *** where the secrets are, line for line; no other view shows them", async () => {
    const auth = { authorization: "Bearer s3cretTokenValue" };
    const daemon = await d.api<{ content: string }>("GET", "/api/config/daemon", undefined, auth);
    expect(daemon.status).toBe(200);
    expect(daemon.body.content).toBe('auth:\n  type: bearer\n  bearer:\n    token:\n      "***"\nexecutor:\n  global_env:\n    API_KEY:\n      "***"\n');
    const source = await d.api<{ content: string }>("GET", "/api/config/source", undefined, auth);
    expect(source.body.content).toBe('jobs:\n  hello:\n    command: echo hello\n    frequency: manual\n    env: {DB_PASSWORD: "***"}\n');

    const run = await d.api<{ run_id: number }>("POST", "/api/jobs/hello/run", {}, auth);
    expect(run.status).toBe(202);
    await until("the run to end", async () => (await d.api<{ status: string }>("GET", `/api/runs/${run.body.run_id}`, undefined, auth)).body.status === "SUCCESS");
    const seen: Seen[] = [];
    for (const path of ["/api/config", "/api/jobs", "/api/jobs/hello", `/api/runs/${run.body.run_id}`, `/api/runs/${run.body.run_id}/logs`, "/api/audit"]) {
      const r = await d.api("GET", path, undefined, auth);
      expect(r.status, path).toBe(200);
      seen.push({ where: path, text: JSON.stringify(r.body) });
    }
    for (const args of [["config", "show"], ["config", "show", "--json"], ["export"], ["validate"]]) {
      const r = await runSvc(args, { cwd: dir });
      expect(r.code, `svc ${args.join(" ")}: ${r.stderr}`).toBe(0);
      seen.push({ where: `svc ${args.join(" ")}`, text: r.stdout + r.stderr });
    }
    seen.push({ where: "daemon output", text: d.output() });
    expectNoSecret(seen, SECRETS);
    // They are in the files, and ?raw=1 shows them to the admin.
    expect((await d.api<{ content: string }>("GET", "/api/config/daemon?raw=1", undefined, auth)).body.content).toBe(DAEMON);
  });
});

describe("a secret anchored in a plain field and aliased into a secret one, through the built binaries", () => {
  // The job checks it got the value (without printing it): only the views hide it.
  const SVC = 'jobs:\n  hello:\n    description: &t anchored-s3cret-77\n    command: test "$TOKEN" = "$EXPECTED"\n    frequency: manual\n    env: {TOKEN: *t, EXPECTED: anchored-s3cret-77}\n';
  let dir: string;
  let d: DaemonProc;

  beforeAll(async () => {
    dir = project(SVC);
    d = await startDaemon(dir);
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
    if (dir) cleanup(dir);
  });

  it("no config view, job view or CLI view shows it; the job runs with it", async () => {
    const run = await d.api<{ run_id: number }>("POST", "/api/jobs/hello/run", {});
    expect(run.status).toBe(202);
    await until("the run to succeed", async () => (await d.api<{ status: string }>("GET", `/api/runs/${run.body.run_id}`)).body.status === "SUCCESS");
    const seen: Seen[] = [];
    for (const path of ["/api/config", "/api/config/source", "/api/jobs", "/api/jobs/hello", "/api/dag"]) {
      const r = await d.api("GET", path);
      expect(r.status, path).toBe(200);
      seen.push({ where: path, text: JSON.stringify(r.body) });
    }
    for (const args of [["config", "show"], ["config", "show", "--json"], ["status", "--json"]]) {
      const r = await runSvc(args, { cwd: dir });
      expect(r.code, `svc ${args.join(" ")}: ${r.stderr}`).toBe(0);
      seen.push({ where: `svc ${args.join(" ")}`, text: r.stdout + r.stderr });
    }
    expectNoSecret(seen, ["anchored-s3cret-77"]);
    const view = await d.api<{ config: { jobs: { hello: { description: string; env: unknown } } } }>("GET", "/api/config");
    expect(view.body.config.jobs.hello).toMatchObject({ description: "***", env: { TOKEN: "***" } });
  });
});

describe("redaction property through a real svcd", () => {
  const ADMIN = "admin-token-e2e-71c3";
  const VIEWER = "viewer-token-e2e-9a04";
  /** The value `${env:SVC_SECRET_TOKEN}` resolves to in the daemon's environment: a secret too. */
  const FROM_ENV = `${MARK}fromenv-resolved-3e1f`;
  const LOG = { level: "debug", format: "json", output: "file", file: { path: "logs/svcd.log" }, audit_log: { enabled: true } };
  let dir: string;
  let d: DaemonProc;
  const configs: GeneratedConfig[] = fc.sample(configArb({ loadable: { tokenFile: "tokens", log: LOG, envSecretVar: "SVC_SECRET_TOKEN" } }), { numRuns: RUNS, seed: SEED });
  const admin = { authorization: `Bearer ${ADMIN}` };
  const viewer = { authorization: `Bearer ${VIEWER}` };

  beforeAll(async () => {
    dir = project(configs[0]!.svc, { daemon: configs[0]!.svcd, files: { tokens: `${ADMIN} admin\n${VIEWER} viewer\n` } });
    d = await startDaemon(dir, [], { SVC_SECRET_TOKEN: FROM_ENV });
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
    if (dir) cleanup(dir);
  });

  it(`${RUNS} random configs loaded by reload: no secret in any answer, command output, error, log or audit line (seed ${SEED})`, { timeout: 60_000 + RUNS * 60_000 }, async () => {
    process.stdout.write(`[secrets] e2e redaction property: seed=${SEED} runs=${RUNS} (replay: SVC_SECRETS_SEED=${SEED})\n`);
    const allSecrets = new Set<string>([FROM_ENV]);
    for (const [i, c] of configs.entries()) {
      const where = `config ${i} (seed ${SEED})`;
      for (const s of c.secrets) allSecrets.add(s);
      const seen: Seen[] = [];
      writeFileSync(join(dir, "svc.yaml"), c.svc);
      writeFileSync(join(dir, "svcd.yaml"), c.svcd);
      const reload = await d.api("POST", "/api/daemon/reload", {}, admin);
      expect(reload.status, `${where}: reload ${JSON.stringify(reload.body)}\n${c.svc}\n${c.svcd}`).toBe(200);

      // The files hold the secrets (so finding none below means something).
      const raw = await d.api<{ content: string }>("GET", "/api/config/source?raw=1", undefined, admin);
      expect(raw.body.content).toBe(c.svc);
      expect((await d.api("GET", "/api/config/daemon?raw=1", undefined, viewer)).status).toBe(403);

      // Every job runs (a `${env:NOPE}` in an env value fails its dispatch: that error is checked too).
      const { jobs } = (await d.api<{ jobs: { name: string }[] }>("GET", "/api/jobs", undefined, viewer)).body;
      const runIds: number[] = [];
      for (const j of jobs) {
        const r = await d.api<{ run_id: number }>("POST", `/api/jobs/${j.name}/run`, {}, admin);
        expect(r.status).toBe(202);
        runIds.push(r.body.run_id);
      }
      // A secret param's value typed at run time (not a default from the file) reads *** too,
      // and searching the audit for it finds nothing (CONTRACT §7.2).
      const typed = `${MARK}typed-param-${i}`;
      allSecrets.add(typed);
      const auditSearches: string[] = [];
      for (const j of jobs) {
        const decl = (await d.api<{ job: { params?: Record<string, { secret: boolean }> } }>("GET", `/api/jobs/${j.name}`, undefined, viewer)).body.job.params;
        const secretName = Object.entries(decl ?? {}).find(([, p]) => p.secret)?.[0];
        if (!secretName) continue;
        const r = await d.api<{ run_id: number }>("POST", `/api/jobs/${j.name}/run`, { params: { [secretName]: typed } }, admin);
        expect(r.status, `${where}: run ${j.name} with a typed secret param ${JSON.stringify(r.body)}`).toBe(202);
        runIds.push(r.body.run_id);
        auditSearches.push(`/api/audit?job=${j.name}&param=${secretName}=${encodeURIComponent(typed)}`);
      }
      for (const id of runIds) {
        // SKIPPED too: a typed-param run of a job whose first run has not ended yet meets `concurrency: forbid`.
        await until(`run ${id} to end`, async () => ["SUCCESS", "FAILED", "SKIPPED"].includes((await d.api<{ status: string }>("GET", `/api/runs/${id}`, undefined, viewer)).body.status));
      }

      const paths = [
        "/api/config",
        "/api/config/source",
        "/api/config/daemon",
        "/api/config/source?raw=0",
        "/api/jobs",
        ...jobs.map((j) => `/api/jobs/${j.name}?runs=50`),
        ...runIds.flatMap((id) => [`/api/runs/${id}`, `/api/runs/${id}/logs`, `/api/runs/${id}/outputs`]),
        "/api/audit",
        "/api/integrations",
        "/api/db/job_runs",
        "/api/db/job_state",
        "/api/daemon/info",
      ];
      for (const path of auditSearches) {
        const r = await d.api<{ total: number }>("GET", path, undefined, admin);
        expect(r.body.total, `${where}: GET ${path} must not match a secret param's value`).toBe(0);
      }
      for (const path of paths) {
        for (const [who, headers] of [["viewer", viewer], ["admin", admin]] as const) {
          const r = await d.api("GET", path, undefined, headers);
          expect(r.status, `${who} ${path}`).toBe(200);
          seen.push({ where: `${where}: ${who} GET ${path}`, text: JSON.stringify(r.body) });
        }
      }

      // Error answers: a rejected validate, a rejected save (the redacted text pasted back), a rejected reload.
      const bad = `${c.svc}\nnot_a_field: 1\n`;
      const validate = await d.api("POST", "/api/config/validate", { file: "svc.yaml", content: bad }, admin);
      seen.push({ where: `${where}: validate`, text: JSON.stringify(validate.body) });
      const plaintextHash = `auth:\n  type: basic\n  basic:\n    users:\n      - username: ann\n        password_hash: "${[...c.secrets].find((s) => !s.includes("\n")) ?? `${MARK}plain`}"\n`;
      const validateDaemon = await d.api<{ valid: boolean }>("POST", "/api/config/validate", { file: "svcd.yaml", content: plaintextHash }, admin);
      expect(validateDaemon.body.valid).toBe(false);
      seen.push({ where: `${where}: validate svcd.yaml`, text: JSON.stringify(validateDaemon.body) });
      const redacted = (await d.api<{ content: string }>("GET", "/api/config/source", undefined, admin)).body.content;
      const save = await d.api("POST", "/api/config/save", { file: "svc.yaml", content: redacted }, admin);
      seen.push({ where: `${where}: save of the redacted text`, text: JSON.stringify(save.body) });
      expect(readFileSync(join(dir, "svc.yaml"), "utf8"), "a save of the redacted text must not touch the file").toBe(c.svc);
      writeFileSync(join(dir, "svc.yaml"), bad);
      const rejected = await d.api("POST", "/api/daemon/reload", {}, admin);
      expect(rejected.status).toBe(422);
      seen.push({ where: `${where}: rejected reload`, text: JSON.stringify(rejected.body) });
      writeFileSync(join(dir, "svc.yaml"), c.svc);

      // The CLI: offline views and the export over the Unix socket.
      for (const args of [["config", "show"], ["config", "show", "--json"], ["validate", "--json"], ["export"]]) {
        const r = await runSvc(args, { cwd: dir, env: { SVC_SECRET_TOKEN: FROM_ENV } });
        expect(r.code === 0 || args[0] === "validate", `svc ${args.join(" ")}: ${r.stderr}`).toBe(true);
        seen.push({ where: `${where}: svc ${args.join(" ")}`, text: r.stdout + r.stderr });
      }
      expectNoSecret(seen, [MARK, FROM_ENV]);
    }

    // The daemon's own output, its log files and the audit log, after all of it.
    const logs = join(dir, "logs");
    const logText = readdirSync(logs).map((f) => readFileSync(join(logs, f), "utf8")).join("");
    expect(logText).toContain("config text with secrets read through the API (?raw=1)");
    const audit = join(d.dataDir, "audit.log");
    await until("the audit log", () => existsSync(audit));
    expectNoSecret(
      [
        { where: "daemon output", text: d.output() },
        { where: "daemon log file", text: logText },
        { where: "audit log", text: readFileSync(audit, "utf8") },
      ],
      [MARK, FROM_ENV, ...allSecrets],
    );
  });
});
