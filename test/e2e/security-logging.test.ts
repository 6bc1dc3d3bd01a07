/**
 * Logging through the built svcd (SPEC `log.*`, Events rule 5, CONTRACT §1
 * and §5): the log file rotated by size and gzip-compressed on disk, text
 * and JSON formats, one debug line per HTTP request without headers, the
 * audit log's line per run state transition, and no secret (a token, an env
 * value, a global_env value) in any log, the audit log, an error message or
 * a config view.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, project, startDaemon, until, type DaemonProc } from "../helpers/daemonKit.js";
import { runSvc } from "./helpers/cli.js";
import { bearer, call, target, tokenLabel, type Target } from "./helpers/security.js";

const TOKEN = "log-token-SECRETMARK-3f9a1c";
const ENV_SECRET = "env-value-SECRETMARK-77b2";
const GLOBAL_SECRET = "global-env-SECRETMARK-e41d";
const FROM_ENV = "from-daemon-env-SECRETMARK-09c1";
const MARK = "SECRETMARK";

const YAML = `jobs:
  hello:
    command: echo "hello"
    frequency: manual
    env:
      API_KEY: ${ENV_SECRET}
      FROM_ENV: \${env:SVC_LOGTEST_SECRET}
  broken:
    command: echo "about to fail"; exit 3
    frequency: manual
    on_failure: ignore
`;

const DAEMON = `auth:
  type: bearer
  bearer:
    token_file: tokens
executor:
  global_env:
    GLOBAL_KEY: ${GLOBAL_SECRET}
log:
  level: debug
  format: json
  output: file
  file:
    path: logs/svcd.log
    max_size_mb: 1
    max_backups: 2
    compress: true
  audit_log:
    enabled: true
`;

/** Every line of a log file and its rotated copies (gunzipped). */
function readLogs(dir: string, base: string): { files: string[]; text: string } {
  const files = readdirSync(dir)
    .filter((f) => f === base || f.startsWith(`${base}.`))
    .sort();
  const text = files.map((f) => {
    const b = readFileSync(join(dir, f));
    return (f.endsWith(".gz") ? gunzipSync(b) : b).toString("utf8");
  });
  return { files, text: text.join("") };
}

describe("log file, audit log and secrets", () => {
  let dir: string;
  let d: DaemonProc;
  let t: Target;
  const auth = { authorization: bearer(TOKEN) };
  const logDir = () => join(dir, "logs");

  beforeAll(async () => {
    dir = project(YAML, { daemon: DAEMON, files: { tokens: `${TOKEN}\n` } });
    d = await startDaemon(dir, [], { SVC_LOGTEST_SECRET: FROM_ENV });
    t = target(d.addr);
  });
  afterAll(async () => {
    await d?.stop();
    if (dir) cleanup(dir);
  });

  it("logs every HTTP request at debug (method, path, status, duration) and never a header", async () => {
    await call(t, "GET", "/api/status?verbose=1", { headers: { ...auth, "user-agent": "agent-SECRETMARK", cookie: "c=SECRETMARK" } });
    await call(t, "POST", "/api/jobs/nope/run", { headers: auth, body: {} });
    await call(t, "GET", "/api/jobs", { headers: { authorization: bearer("wrong-SECRETMARK-token") } });
    const requests = await until("the request lines", () => {
      const lines = readLogs(logDir(), "svcd.log").text.split("\n").filter((l) => l.includes('"http request"'));
      return lines.length >= 3 ? lines.map((l) => JSON.parse(l)) : null;
    });
    expect(requests.slice(-3).map(({ method, path, status }) => ({ method, path, status }))).toEqual([
      { method: "GET", path: "/api/status", status: 200 },
      { method: "POST", path: "/api/jobs/nope/run", status: 404 },
      { method: "GET", path: "/api/jobs", status: 401 },
    ]);
    for (const r of requests) {
      expect(Object.keys(r).sort()).toEqual(["level", "method", "ms", "msg", "path", "status", "time"]);
      expect(typeof r.ms).toBe("number");
    }
  });

  it("writes one audit line per run state transition, with who and why", async () => {
    const ok = await call(t, "POST", "/api/jobs/hello/run", { headers: auth, body: { reason: "audit check" } });
    const bad = await call(t, "POST", "/api/jobs/broken/run", { headers: auth, body: {} });
    const auditPath = join(d.dataDir, "audit.log");
    const entries = await until("the final transitions", () => {
      if (!existsSync(auditPath)) return null;
      const all = readFileSync(auditPath, "utf8").trim().split("\n").map((l) => JSON.parse(l));
      const done = all.filter((e) => (e.run_id === ok.json.run_id && e.status === "SUCCESS") || (e.run_id === bad.json.run_id && e.status === "FAILED"));
      return done.length === 2 ? all : null;
    });
    const hello = entries.filter((e) => e.run_id === ok.json.run_id);
    expect(hello.map((e) => [e.from, e.status])).toEqual([
      [null, "PENDING"],
      ["PENDING", "RUNNING"],
      ["RUNNING", "SUCCESS"],
    ]);
    const last = hello.at(-1);
    expect(Object.keys(last).sort()).toEqual(
      ["attempt", "cycle_id", "duration_ms", "event", "exit_code", "from", "job", "reason", "run_id", "status", "trigger", "triggered_by", "ts"].sort(),
    );
    expect(last).toMatchObject({ event: "run_status", job: "hello", trigger: "manual", triggered_by: tokenLabel(TOKEN), reason: "audit check", exit_code: 0, attempt: 1 });
    expect(last.duration_ms).toBeGreaterThanOrEqual(0);
    expect(new Date(last.ts).toISOString()).toBe(last.ts);
    const failed = entries.filter((e) => e.run_id === bad.json.run_id).at(-1);
    expect(failed).toMatchObject({ job: "broken", status: "FAILED", from: "RUNNING", exit_code: 3 });
    expect((statSync(auditPath).mode & 0o777).toString(8)).toBe("600");
  });

  it("rotates the log file by size, gzips the copies and keeps max_backups of them", async () => {
    // Long unknown paths make big request lines: about 8 KB each, over 3 MB in all.
    const path = `/api/${"x".repeat(8_000)}`;
    for (let i = 0; i < 420; i += 20) {
      await Promise.all(Array.from({ length: 20 }, () => call(t, "GET", path, { headers: auth })));
    }
    // A copy is complete once it gunzips (rotation compresses in the background).
    const complete = (f: string) => {
      try {
        return gunzipSync(readFileSync(join(logDir(), f))).length > 0;
      } catch {
        return false;
      }
    };
    // Settled: the same files and sizes twice, 300 ms apart, and both copies complete.
    const snapshot = () => readdirSync(logDir()).sort().map((f) => `${f}:${statSync(join(logDir(), f)).size}`).join(",");
    let last = "";
    const files = await until("two compressed copies", async () => {
      await new Promise((r) => setTimeout(r, 300));
      const now = snapshot();
      const settled = now === last && complete("svcd.log.1.gz") && complete("svcd.log.2.gz");
      last = now;
      return settled ? readdirSync(logDir()).sort() : null;
    });
    expect(files.filter((f) => !f.endsWith(".tmp"))).toEqual(["svcd.log", "svcd.log.1.gz", "svcd.log.2.gz"]);
    for (const f of ["svcd.log.1.gz", "svcd.log.2.gz"]) {
      const gz = readFileSync(join(logDir(), f));
      const text = gunzipSync(gz).toString("utf8");
      expect(gz.length, "compressed").toBeLessThan(text.length / 10);
      expect(text.length).toBeGreaterThan(900_000);
      expect(text.length).toBeLessThan(1_100_000);
      for (const line of text.trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow();
      expect((statSync(join(logDir(), f)).mode & 0o777).toString(8)).toBe("600");
    }
  }, 60_000);

  it("keeps every secret out of logs, the audit log, error messages, config views and exports", async () => {
    const views = [
      await call(t, "GET", "/api/config", { headers: auth }),
      await call(t, "GET", "/api/config/daemon", { headers: auth }),
      await call(t, "GET", "/api/jobs", { headers: auth }),
      await call(t, "GET", "/api/jobs/hello", { headers: auth }),
      await call(t, "GET", "/api/status", { headers: { authorization: bearer(`${TOKEN}x`) } }),
      await call(t, "GET", "/api/status", { headers: { authorization: `Bearer ${TOKEN} ${TOKEN}` } }),
    ];
    expect(views.slice(0, 4).map((v) => v.status)).toEqual([200, 200, 200, 200]);
    expect(views[3]!.json.job.env).toEqual({ API_KEY: "***", FROM_ENV: "***" });
    const show = await runSvc(["config", "show", "--json"], { cwd: dir, env: { SVC_LOGTEST_SECRET: FROM_ENV } });
    expect(show.code, show.stderr).toBe(0);
    const exported = await runSvc(["export"], { cwd: dir });
    expect(exported.code, exported.stderr).toBe(0);
    const wrongCli = await runSvc(["status"], { env: { SVC_ADDR: `http://${d.addr}`, SVC_TOKEN: `${TOKEN}-wrong` } });
    expect(wrongCli.code).toBe(1);

    await d.stop();
    const outputs: [string, string][] = [
      ["daemon stdout/stderr", d.output()],
      ["log files", readLogs(logDir(), "svcd.log").text],
      ["audit log", readLogs(d.dataDir, "audit.log").text],
      ...views.map((v, i): [string, string] => [`view ${i}`, v.text]),
      ["svc config show", show.stdout + show.stderr],
      ["svc export", exported.stdout + exported.stderr],
      ["svc with a wrong token", wrongCli.stdout + wrongCli.stderr],
    ];
    for (const [name, text] of outputs) {
      // The daemon logs to a file here: its stdout and stderr may be empty; everything else is not.
      if (name !== "daemon stdout/stderr") expect(text.length, `${name} is not empty`).toBeGreaterThan(0);
      for (const secret of [TOKEN, ENV_SECRET, GLOBAL_SECRET, FROM_ENV]) expect(text.includes(secret), `${name} contains ${secret}`).toBe(false);
      // Request headers (the user agent and cookie above carried the marker) are never logged.
      expect(text.includes(MARK), `${name} contains the marker`).toBe(false);
    }
    // The log file kept its last lines through the stop (nothing lost in flight).
    expect(readLogs(logDir(), "svcd.log").text).toContain("stopping: draining running jobs");
  }, 60_000);
});

describe("text format", () => {
  it("writes one readable line per entry, to a file, and loses none at shutdown", async () => {
    const dir = project(YAML.replace(/\n {6}FROM_ENV.*\n/, "\n"), { daemon: "log:\n  level: debug\n  format: text\n  output: file\n" });
    try {
      const d = await startDaemon(dir);
      const t = target(d.addr);
      for (let i = 0; i < 50; i++) await call(t, "GET", `/api/status?i=${i}`);
      await d.stop();
      const lines = readFileSync(join(d.dataDir, "svcd.log"), "utf8").trim().split("\n");
      const requests = lines.filter((l) => l.includes("http request"));
      expect(requests).toHaveLength(50);
      expect(requests[0]).toMatch(/^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}\] DEBUG: http request \{"method":"GET","path":"\/api\/status","status":200,"ms":[\d.]+\}$/);
      expect(lines.at(-1)).toMatch(/INFO: stopping: draining running jobs/);
    } finally {
      cleanup(dir);
    }
  });
});
