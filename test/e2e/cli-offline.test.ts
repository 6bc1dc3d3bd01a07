/**
 * The offline commands through the built binary: validate, config show, dag,
 * next, --version, usage errors, and bad input files. Every error is one
 * line per problem on stderr, with the right exit code and no stack trace.
 */
import { readFileSync } from "node:fs";
import { afterAll, describe, it } from "vitest";
import { hasStackTrace, lines, ROOT, runSvc, tempProject, type TempProject } from "./helpers/cli.js";

const VALID = `defaults:
  timezone: Europe/Berlin
integrations:
  ops-chat: {provider: chat, webhook_url: "https://chat.example/hooks/T0K3N"}
  smtp: {host: mail.local, from: svc@example.org, username: mailer, password: hunter2}
jobs:
  extract:
    description: pull rows
    command: echo rows=3
    frequency: daily
    time: "0230"
    output: {rows: "json_field:rows"}
    env: {API_KEY: sk-live-123}
  transform:
    description: use them
    command: echo "{{ outputs.extract.rows }}"
    frequency: after:extract
    notify: {on_failure: "ops-chat:#data"}
  load:
    description: store
    command: ["true"]
    depends_on: [transform, extract]
  cleanup:
    description: by hand
    command: "true"
    tags: [maintenance]
`;

const INVALID = `jobs:
  extract:
    command: x
    frequency: daily
    time: 0230
  transform:
    command: y
    frequency: after:extract
    on_failure: explode
    timeout: 1h
    sla: 2h
`;

const projects: TempProject[] = [];
function project(files: Record<string, string | Buffer>): TempProject {
  const p = tempProject(files);
  projects.push(p);
  return p;
}
afterAll(() => {
  for (const p of projects) p.remove();
});

/** `file:line:col: path: message`, or `file: message` when the position is unknown. */
const ISSUE_LINE = /^[^:\s]+(:\d+:\d+)?: .+$/;

describe.concurrent("svc validate", () => {
  it("passes a valid project and says what it checked", async ({ expect }) => {
    const p = project({ "svc.yaml": VALID, "svcd.yaml": "scheduler: {max_concurrent_jobs: 4}\n" });
    const r = await runSvc(["validate"], { cwd: p.dir });
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual(["svc.yaml: ok (4 jobs, 2 integrations)", "svcd.yaml: ok"]);
    expect(r.stderr).toBe("");
  });

  it("the example project passes --strict", async ({ expect }) => {
    const r = await runSvc(["-c", "examples/svc.yaml", "validate", "--strict"], { cwd: ROOT });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^examples\/svc.yaml: ok \(\d+ jobs, 1 integration\)\nexamples\/svcd.yaml: ok\n$/);
  });

  it("prints one line per error with file:line:col and the field path, exit 1", async ({ expect }) => {
    const p = project({ "svc.yaml": INVALID });
    const r = await runSvc(["validate"], { cwd: p.dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(lines(r.stderr)).toEqual([
      'svc.yaml:5:5: jobs.extract.time: must be a quoted string of 4 digits HHMM; YAML read the unquoted value as the number 230: quote it, write time: "0230"',
      'svc.yaml:9:5: jobs.transform.on_failure: must be one of alert, skip, stop, ignore (got "explode")',
      "svc.yaml:11:5: jobs.transform.sla: sla (2h) must be less than timeout (1h): the job would be stopped before its SLA could be breached",
    ]);
  });

  it("checks svcd.yaml too", async ({ expect }) => {
    const p = project({
      "svc.yaml": VALID,
      "svcd.yaml": `api:\n  adr: 1\nauth:\n  basic:\n    users: [{username: a, password_hash: hunter2}]\n`,
    });
    const r = await runSvc(["validate"], { cwd: p.dir });
    expect(r.code).toBe(1);
    const out = lines(r.stderr);
    expect(out).toHaveLength(2);
    expect(out[0]).toBe('svcd.yaml:2:3: api.adr: unknown field "adr" (did you mean "addr"?)');
    expect(out[1]).toMatch(/^svcd.yaml:5:\d+: auth.basic.users\[0\].password_hash: must be a bcrypt hash/);
    expect(r.stderr).not.toContain("hunter2");
  });

  it("--strict adds warnings and fails on them", async ({ expect }) => {
    const p = project({
      "svc.yaml": "jobs:\n  a:\n    command: x\n",
      "svcd.yaml": "api:\n  cors: {allowed_origins: ['*']}\nauth:\n  type: bearer\n  bearer: {token: abc}\n",
    });
    const loose = await runSvc(["validate"], { cwd: p.dir });
    expect(loose.code).toBe(0);
    expect(loose.stdout).toContain("svc.yaml: ok (1 job, 0 integrations); 1 warning, see --strict");
    const strict = await runSvc(["validate", "--strict"], { cwd: p.dir });
    expect(strict.code).toBe(1);
    expect(lines(strict.stderr)).toEqual([
      'svc.yaml:2:3: warning: jobs.a: job "a" has no description',
      'svcd.yaml:2:28: warning: api.cors.allowed_origins[0]: allowed origin "*" lets any web page call the API',
      "svcd.yaml:5:12: warning: auth.bearer.token: inline bearer token: prefer auth.bearer.token_file (one token per line, re-read on reload)",
    ]);
    expect(strict.stderr).not.toContain("abc");
  });

  it("--json prints the API's shape", async ({ expect }) => {
    const p = project({ "svc.yaml": INVALID });
    const r = await runSvc(["validate", "--json"], { cwd: p.dir });
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual(["valid", "errors", "warnings"]);
    expect(doc.valid).toBe(false);
    expect(doc.errors[0]).toEqual({
      file: p.path("svc.yaml"),
      line: 5,
      column: 5,
      path: "/jobs/extract/time",
      message: expect.stringContaining("quote it"),
    });
    const ok = await runSvc(["validate", "--json"], { cwd: project({ "svc.yaml": VALID }).dir });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual({ valid: true, errors: [], warnings: [] });
  });

  it("finds svc.yaml in a parent directory, or by SVC_CONFIG", async ({ expect }) => {
    const p = project({ "svc.yaml": VALID, "sub/deeper/.keep": "" });
    const up = await runSvc(["validate"], { cwd: p.path("sub/deeper") });
    expect(up.code).toBe(0);
    expect(up.stdout).toContain(`${p.path("svc.yaml")}: ok`);
    const other = project({ "elsewhere.yaml": VALID });
    const byEnv = await runSvc(["validate"], { cwd: other.dir, env: { SVC_CONFIG: "elsewhere.yaml" } });
    expect(byEnv.code).toBe(0);
    expect(byEnv.stdout).toContain("elsewhere.yaml: ok");
  });
});

describe.concurrent("bad input: one line per error, exit 1, never a stack trace", () => {
  const cases: [string, Record<string, string | Buffer>, string[], RegExp][] = [
    ["malformed YAML", { "svc.yaml": "jobs:\n  a:\n    command: [x\n  b: {\n" }, [], /^svc\.yaml:\d+:\d+: YAML: /],
    ["a wrong type", { "svc.yaml": "jobs:\n  a:\n    command: x\n    retries: many\n" }, [], /^svc\.yaml:4:5: jobs\.a\.retries: must be an integer from 0 to 100$/],
    ["a missing file", {}, ["-c", "nope.yaml"], /nope\.yaml: no such file$/],
    ["a directory instead of a file", { "conf/.keep": "" }, ["-c", "conf"], /conf: is a directory, not a file/],
    [
      "binary garbage",
      { "svc.yaml": Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00, 0xff, 0xd8, 0x0a, 0x00]) },
      [],
      /^svc\.yaml:1:7: not a text file \(contains a NUL byte\); expected YAML$/,
    ],
    ["a 10 MB file", { "svc.yaml": "# padding padding padding padding padding\n".repeat(250_000) }, [], /^svc\.yaml: file is too large \(10\.\d MB; the limit is 8 MB\)$/],
    ["a scalar document", { "svc.yaml": "just some words\n" }, [], /^svc\.yaml:1:1: must be a map/],
  ];
  it.for(cases)("%s", async ([, files, args, pattern], { expect }) => {
    const p = project(files);
    const r = await runSvc([...args, "validate"], { cwd: p.dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const out = lines(r.stderr);
    expect(out.length).toBeGreaterThan(0);
    expect(out[0]).toMatch(pattern);
    for (const line of out) expect(line).toMatch(ISSUE_LINE);
    expect(hasStackTrace(r.stderr)).toBe(false);
  });

  it("the other offline commands report bad files the same way", async ({ expect }) => {
    const p = project({ "svc.yaml": "jobs:\n  a:\n    command: x\n    retries: many\n" });
    for (const cmd of [["dag"], ["config", "show"], ["next", "a"]]) {
      const r = await runSvc(cmd, { cwd: p.dir });
      expect(r.code).toBe(1);
      expect(lines(r.stderr)).toEqual(["svc.yaml:4:5: jobs.a.retries: must be an integer from 0 to 100"]);
    }
  });

  it("no svc.yaml anywhere", async ({ expect }) => {
    const p = project({});
    const r = await runSvc(["validate"], { cwd: "/", env: { HOME: p.dir } });
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([
      "svc: no svc.yaml found in / or any parent directory: pass -c PATH, set SVC_CONFIG, or run where svc.yaml is",
    ]);
    const json = await runSvc(["validate", "--json"], { cwd: "/", env: { HOME: p.dir } });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: false, errors: [{ message: expect.stringMatching(/^no svc.yaml found/) }] });
  });
});

describe.concurrent("svc config show", () => {
  it("prints the effective config as YAML with secrets redacted", async ({ expect }) => {
    const p = project({ "svc.yaml": VALID, "svcd.yaml": `auth:\n  type: bearer\n  bearer: {token: s3cr3t}\n` });
    const r = await runSvc(["config", "show"], { cwd: p.dir });
    expect(r.code).toBe(0);
    for (const secret of ["T0K3N", "hunter2", "mailer", "sk-live-123", "s3cr3t"]) expect(r.stdout).not.toContain(secret);
    expect(r.stdout).toContain("API_KEY: \"***\"");
    expect(r.stdout).toContain("retry_delay: exponential"); // a default, applied
    expect(r.stdout).toContain("max_concurrent_jobs: 32");
    expect(r.stdout).toMatch(/^# svc\.yaml: effective config/);
    expect(r.stdout).toContain("\n---\n# svcd.yaml (svcd.yaml): effective daemon config\n");
  });

  it("--json prints {config, daemon}", async ({ expect }) => {
    const p = project({ "svc.yaml": VALID });
    const r = await runSvc(["config", "show", "--json"], { cwd: p.dir });
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual(["config", "daemon"]);
    expect(doc.config.jobs.extract).toMatchObject({ time: "0230", timezone: "Europe/Berlin", env: { API_KEY: "***" }, retries: 0 });
    expect(doc.config.integrations["ops-chat"]).toEqual({ provider: "chat", webhook_url: "***", credential_status: "configured" });
    expect(doc.daemon.executor).toEqual({ pool_size: 8, shell: "/bin/sh", global_env: {}, kill_grace: "10s" });
  });
});

describe.concurrent("svc dag", () => {
  it("prints a tree, upstreams above downstreams", async ({ expect }) => {
    const p = project({ "svc.yaml": VALID });
    const r = await runSvc(["dag"], { cwd: p.dir });
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      "extract  daily 02:30 Europe/Berlin",
      "├── transform  after:extract",
      "│   └── load  after:transform,extract  [depends_on]",
      "└── load  [depends_on]  (see above)",
      "cleanup  manual",
    ]);
  });

  it("--json prints CONTRACT's shape", async ({ expect }) => {
    const p = project({ "svc.yaml": VALID });
    const r = await runSvc(["dag", "--json"], { cwd: p.dir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      nodes: [
        { name: "extract", frequency: "daily", tags: [] },
        { name: "transform", frequency: "after:extract", tags: [] },
        { name: "load", frequency: "after:transform,extract", tags: [] },
        { name: "cleanup", frequency: "manual", tags: ["maintenance"] },
      ],
      edges: [
        { from: "extract", to: "transform", kind: "after" },
        { from: "transform", to: "load", kind: "depends_on" },
        { from: "extract", to: "load", kind: "depends_on" },
      ],
      order: ["extract", "transform", "load", "cleanup"],
    });
  });

  it("refuses a cycle with its full path", async ({ expect }) => {
    const p = project({ "svc.yaml": "jobs:\n  a: {command: x, depends_on: [b]}\n  b: {command: x, frequency: after:a}\n" });
    const r = await runSvc(["dag"], { cwd: p.dir });
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([
      "svc.yaml:3:19: jobs.b.frequency: dependency cycle: a -> b -> a (b after:a at svc.yaml:3; a depends_on b at svc.yaml:2); remove one of these edges",
    ]);
  });
});

describe.concurrent("svc next", () => {
  it("lists the next runs in UTC and local time, with DST notes", async ({ expect }) => {
    const p = project({ "svc.yaml": VALID.replace("timezone: Europe/Berlin", "timezone: America/New_York") });
    const r = await runSvc(["next", "extract", "--count", "3", "--from", "2027-03-13T00:00:00Z", "--json"], { cwd: p.dir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      job: "extract",
      timezone: "America/New_York",
      runs: [
        { utc: "2027-03-13T07:30:00.000Z", local: "2027-03-13T02:30:00-05:00 EST", note: null },
        { utc: "2027-03-14T07:00:00.000Z", local: "2027-03-14T03:00:00-04:00 EDT", note: expect.stringContaining("DST gap") },
        { utc: "2027-03-15T06:30:00.000Z", local: "2027-03-15T02:30:00-04:00 EDT", note: null },
      ],
    });
    const text = await runSvc(["next", "extract", "--count", "1", "--from", "2027-03-13T00:00:00Z"], { cwd: p.dir });
    expect(text.stdout).toBe("2027-03-13T07:30:00.000Z  2027-03-13T02:30:00-05:00 EST\n");
  });

  it("manual and after: jobs have no schedule", async ({ expect }) => {
    const p = project({ "svc.yaml": VALID });
    const r = await runSvc(["next", "transform", "--json"], { cwd: p.dir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ job: "transform", timezone: "Europe/Berlin", runs: [] });
    const manual = await runSvc(["next", "cleanup"], { cwd: p.dir });
    expect(manual.stdout).toBe("cleanup has no schedule (frequency manual)\n");
  });

  it("a schedule whose every slot is excluded says so (not \"frequency manual\"); a sparse one's first slot decades away shows", async ({ expect }) => {
    const newYears = Array.from({ length: 120 }, (_, i) => `"${2027 + i}-01-01"`).join(", ");
    const p = project({
      "svc.yaml": `defaults:\n  exclude: {dates: ["2026-12-25"]}\njobs:\n  frozen:\n    command: x\n    frequency: "cron:0 0 1 1 *"\n    timezone: UTC\n    exclude: {dates: [${newYears}]}\n  leap:\n    command: x\n    frequency: "cron:0 0 * 2 1#5"\n    timezone: UTC\n`,
    });
    const frozen = await runSvc(["next", "frozen", "--from", "2026-06-01T00:00:00Z"], { cwd: p.dir });
    expect(frozen.stdout).toBe("frozen: no slot runs: exclude removes every one for at least 10 years (svc next frozen --all lists them)\n");
    const leap = await runSvc(["next", "leap", "--count", "1", "--from", "2026-01-01T00:00:00Z"], { cwd: p.dir });
    expect(leap.stdout).toBe("2044-02-29T00:00:00.000Z  2044-02-29T00:00:00+00:00 UTC\n");
  });

  it("usage errors exit 2; an unknown job exits 1", async ({ expect }) => {
    const p = project({ "svc.yaml": VALID });
    const bad = await runSvc(["next", "extract", "--count", "0"], { cwd: p.dir });
    expect(bad.code).toBe(2);
    expect(lines(bad.stderr)).toEqual(["svc: --count must be an integer from 1 to 1000, got \"0\" (see 'svc next --help')"]);
    const from = await runSvc(["next", "extract", "--from", "tomorrow"], { cwd: p.dir });
    expect(from.code).toBe(2);
    const unknown = await runSvc(["next", "nope"], { cwd: p.dir });
    expect(unknown.code).toBe(1);
    expect(lines(unknown.stderr)).toEqual(['svc: unknown job "nope" (svc dag lists the jobs)']);
  });
});

describe.concurrent("the program", () => {
  it("--version prints package.json's version", async ({ expect }) => {
    const version = JSON.parse(readFileSync(`${ROOT}/package.json`, "utf8")).version as string;
    for (const flag of ["--version", "-V"]) {
      const r = await runSvc([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${version}\n`);
    }
  });

  it("an unknown command is a usage error: exit 2, one line with a hint", async ({ expect }) => {
    const r = await runSvc(["valdate"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(lines(r.stderr)).toEqual(["svc: unknown command 'valdate' (Did you mean validate?) (see 'svc --help')"]);
    const opt = await runSvc(["validate", "--bogus"]);
    expect(opt.code).toBe(2);
    expect(lines(opt.stderr)).toEqual(["svc: unknown option '--bogus' (see 'svc --help')"]);
  });

  it("--help on every command", async ({ expect }) => {
    for (const args of [["--help"], ["validate", "--help"], ["config", "show", "--help"], ["dag", "--help"], ["next", "--help"], ["help", "validate"]]) {
      const r = await runSvc(args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toMatch(/^Usage: svc/);
    }
    const bare = await runSvc([]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/^Usage: svc/);
  });
});
