import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadProject, parseProjectText } from "./project.js";
import { effectiveView } from "./views.js";
import { errorsOf, issueAt, lineOf, columnOf, tempProject, valueOf } from "./testkit.js";

const FILE = "/nonexistent-dir/svc.yaml"; // parseProjectText never reads it (.env is simply absent)
const parse = (text: string, env: NodeJS.ProcessEnv = {}) => parseProjectText(text, FILE, env);

/** Asserts the one error at `pointer` sits on the line containing `marker`. */
function expectError(text: string, pointer: string, marker: string, message?: RegExp): void {
  const issue = issueAt(errorsOf(parse(text)), pointer);
  expect(issue.line, `${pointer}: ${issue.message}`).toBe(lineOf(text, marker));
  expect(issue.column).toBeGreaterThan(0);
  expect(issue.file).toBe(FILE);
  if (message) expect(issue.message).toMatch(message);
}

describe("SPEC Errors table: config rejected at parse time, with field path and line", () => {
  it("invalid time", () => {
    const text = `jobs:\n  a:\n    command: x\n    frequency: daily\n    time: "2561"\n`;
    expectError(text, "/jobs/a/time", "time:", /4 digits HHMM/);
  });

  it("unquoted time: says to quote it", () => {
    const text = `jobs:\n  a:\n    command: x\n    frequency: daily\n    time: 0230\n`;
    expectError(text, "/jobs/a/time", "time:", /quote it, write time: "0230"/);
  });

  it("unknown frequency", () => {
    const text = `jobs:\n  a:\n    command: x\n    frequency: fortnightly\n`;
    expectError(text, "/jobs/a/frequency", "frequency:", /must be one of hourly.*\(got "fortnightly"\)/);
  });

  it("unknown timezone (job and defaults)", () => {
    const text = `defaults:\n  timezone: Mars/Olympus\njobs:\n  a:\n    command: x\n    timezone: Europe/Atlantis\n`;
    expectError(text, "/jobs/a/timezone", "Europe/Atlantis", /unknown timezone "Europe\/Atlantis"/);
    expectError(text, "/defaults/timezone", "Mars/Olympus", /unknown timezone/);
  });

  it("bad on_failure", () => {
    expectError(`jobs:\n  a:\n    command: x\n    on_failure: explode\n`, "/jobs/a/on_failure", "on_failure", /alert, skip, stop, ignore/);
  });

  it("bad retry_delay", () => {
    expectError(`jobs:\n  a:\n    command: x\n    retry_delay: fixed:soon\n`, "/jobs/a/retry_delay", "retry_delay", /exponential or fixed:<duration>/);
    expectError(`jobs:\n  a:\n    command: x\n    retry_delay: linear\n`, "/jobs/a/retry_delay", "retry_delay");
  });

  it("bad concurrency", () => {
    expectError(`jobs:\n  a:\n    command: x\n    concurrency: queue\n`, "/jobs/a/concurrency", "concurrency", /allow, forbid, replace/);
  });

  it("sla not below timeout", () => {
    const text = `jobs:\n  a:\n    command: x\n    timeout: 1h\n    sla: 90m\n`;
    expectError(text, "/jobs/a/sla", "sla:", /sla \(1h30m\) must be less than timeout \(1h\)/);
    expectError(`jobs:\n  a:\n    command: x\n    timeout: 1h\n    sla: 1h\n`, "/jobs/a/sla", "sla:");
  });

  it("sla not below a timeout inherited from defaults", () => {
    const text = `defaults:\n  timeout: 10m\njobs:\n  a:\n    command: x\n    sla: 10m\n`;
    expectError(text, "/jobs/a/sla", "sla:");
  });

  it("tags violating limits: count, length, characters", () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `t${i}`).join(", ");
    expectError(`jobs:\n  a:\n    command: x\n    tags: [${eleven}]\n`, "/jobs/a/tags", "tags:", /at most 10/);
    const long = "x".repeat(33);
    expectError(`jobs:\n  a:\n    command: x\n    tags:\n      - ok\n      - ${long}\n`, "/jobs/a/tags/1", long, /at most 32 characters/);
    expectError(`jobs:\n  a:\n    command: x\n    tags: [ETL]\n`, "/jobs/a/tags/0", "tags:", /lowercase/);
    expectError(`jobs:\n  a:\n    command: x\n    tags: [a_b]\n`, "/jobs/a/tags/0", "tags:");
  });

  it("integration missing required credentials", () => {
    const text = [
      "integrations:",
      "  chat: {}",
      "  pager:",
      "    webhook_url: https://events.example/v2",
      "  mail:",
      "    provider: smtp",
      "    host: mail.local",
      "  custom:",
      "    webhook_url: https://x.example",
      "jobs: {}",
    ].join("\n");
    expectError(text, "/integrations/chat/webhook_url", "chat: {}", /missing required field "webhook_url"/);
    expectError(text, "/integrations/pager/routing_key", "  pager:", /missing required field "routing_key"/);
    expectError(text, "/integrations/mail/from", "  mail:", /missing required field "from"/);
    expectError(text, "/integrations/custom/provider", "  custom:", /missing provider/);
  });

  it("SMTP port out of range", () => {
    const text = `integrations:\n  smtp:\n    host: mail.local\n    from: a@b.c\n    port: 70000\njobs: {}\n`;
    expectError(text, "/integrations/smtp/port", "port:", /1 to 65535/);
    expectError(text.replace("70000", "0"), "/integrations/smtp/port", "port:");
  });

  it("unknown depends_on target, naming the job and its location", () => {
    const text = `jobs:\n  a:\n    command: x\n  b:\n    command: y\n    depends_on: [a, ghost]\n`;
    expectError(text, "/jobs/b/depends_on/1", "depends_on", /unknown job "ghost" in depends_on of job "b"/);
    const issue = issueAt(errorsOf(parse(text)), "/jobs/b/depends_on/1");
    expect(issue.column).toBe(columnOf(text, "ghost"));
  });

  it("unknown after: target", () => {
    const text = `jobs:\n  extract:\n    command: x\n  b:\n    command: y\n    frequency: after:extrct\n`;
    expectError(text, "/jobs/b/frequency", "after:extrct", /unknown job "extrct".*did you mean "extract"/);
  });

  it("dependency cycle: full path and where each edge is declared", () => {
    const text = [
      "jobs:",
      "  a:",
      "    command: x",
      "    depends_on: [c]",
      "  b:",
      "    command: x",
      "    frequency: after:a",
      "  c:",
      "    command: x",
      "    depends_on:",
      "      - b",
    ].join("\n");
    const errors = errorsOf(parse(text));
    expect(errors).toHaveLength(1);
    const [cycle] = errors;
    expect(cycle!.message).toContain("dependency cycle: a -> b -> c -> a");
    expect(cycle!.message).toContain(`b after:a at svc.yaml:${lineOf(text, "after:a")}`);
    expect(cycle!.message).toContain(`c depends_on b at svc.yaml:${lineOf(text, "- b")}`);
    expect(cycle!.message).toContain(`a depends_on c at svc.yaml:${lineOf(text, "[c]")}`);
    expect(cycle!.path).toBe("/jobs/b/frequency");
    expect(cycle!.line).toBe(lineOf(text, "after:a"));
  });

  it("collects every error of a file in one pass", () => {
    const text = [
      "integrations:",
      "  smtp: {host: h, from: f, port: 99999}",
      "jobs:",
      "  a:",
      "    command: x",
      "    frequency: fortnightly",
      "    on_failure: explode",
      "    concurrency: queue",
      "    retry_delay: never",
      "    timezone: Nowhere/Town",
      "  b:",
      "    command: y",
      "    frequency: daily",
      '    time: "2400"',
      "    timeout: 1m",
      "    sla: 2m",
      "    tags: [BAD]",
      "    depends_on: [ghost]",
      "    bogus: 1",
    ].join("\n");
    const errors = errorsOf(parse(text));
    const paths = errors.map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "/integrations/smtp/port",
        "/jobs/a/frequency",
        "/jobs/a/on_failure",
        "/jobs/a/concurrency",
        "/jobs/a/retry_delay",
        "/jobs/a/timezone",
        "/jobs/b/time",
        "/jobs/b/sla",
        "/jobs/b/tags/0",
        "/jobs/b/depends_on/0",
        "/jobs/b/bogus",
      ]),
    );
    expect(errors).toHaveLength(11);
    // Sorted by position, each on its own line.
    expect(errors.map((e) => e.line)).toEqual([...errors.map((e) => e.line)].sort((x, y) => x - y));
    for (const e of errors) expect(text.split("\n")[e.line - 1]).toBeDefined();
  });
});

describe("shape errors", () => {
  it("unknown fields with a suggestion, at the field's line", () => {
    const text = `jobs:\n  a:\n    comand: x\n`;
    const errors = errorsOf(parse(text));
    expect(issueAt(errors, "/jobs/a/comand").message).toBe('unknown field "comand" (did you mean "command"?)');
    expect(issueAt(errors, "/jobs/a/command").message).toBe('missing required field "command"');
    expect(issueAt(errors, "/jobs/a/command").line).toBe(2); // the job's key
    expect(issueAt(errorsOf(parse("job:\n  a: {}\n")), "/job").message).toMatch(/did you mean "jobs"/);
  });

  it("bad job names", () => {
    const text = `jobs:\n  "bad name":\n    command: x\n`;
    expectError(text, "/jobs/bad name", "bad name", /job names must match/);
  });

  it("time on a frequency that has none; time missing where needed", () => {
    expectError(`jobs:\n  a:\n    command: x\n    frequency: hourly\n    time: "0100"\n`, "/jobs/a/time", "time:", /only used by daily/);
    expectError(`jobs:\n  a:\n    command: x\n    frequency: weekly\n`, "/jobs/a/time", "  a:", /time is required for frequency weekly/);
    expectError(`jobs:\n  a:\n    command: x\n    frequency: daily\n    weekday: tue\n    time: "0100"\n`, "/jobs/a/weekday", "weekday", /only used by frequency weekly/);
    expectError(`jobs:\n  a:\n    command: x\n    frequency: weekly\n    day_of_month: 3\n    time: "0100"\n`, "/jobs/a/day_of_month", "day_of_month");
  });

  it("durations", () => {
    expectError(`jobs:\n  a:\n    command: x\n    timeout: 5 minutes\n`, "/jobs/a/timeout", "timeout", /duration like 90s, 1h30m or 2d/);
    expectError(`jobs:\n  a:\n    command: x\n    timeout: 0s\n`, "/jobs/a/timeout", "timeout", /greater than 0/);
  });

  it("retries range, command shape, env value types", () => {
    expectError(`jobs:\n  a:\n    command: x\n    retries: 101\n`, "/jobs/a/retries", "retries", /0 to 100/);
    expectError(`jobs:\n  a:\n    command: []\n`, "/jobs/a/command", "command", /non-empty/);
    expectError(`jobs:\n  a:\n    command: x\n    env:\n      PORT: 8080\n`, "/jobs/a/env/PORT", "PORT", /quote numbers/);
  });

  it("output modes, including an invalid regular expression", () => {
    const text = `jobs:\n  a:\n    command: x\n    output:\n      n: "regex:(unclosed"\n      m: "json_field:"\n`;
    const errors = errorsOf(parse(text));
    expect(issueAt(errors, "/jobs/a/output/n").message).toMatch(/invalid regular expression/);
    expect(issueAt(errors, "/jobs/a/output/m").line).toBe(lineOf(text, "m:"));
  });

  it("output references: unknown job, unknown variable, a job that is not upstream", () => {
    const text = [
      "jobs:",
      "  a:",
      "    command: x",
      "    output: {rows: last_line}",
      "  b:",
      '    command: "echo {{ outputs.nope.rows }}"',
      "    frequency: after:a",
      "  c:",
      '    command: ["echo", "{{ outputs.a.count }}"]',
      "    depends_on: [a]",
      "  d:",
      "    command: echo",
      '    env: {ROWS: "{{ outputs.a.rows }}"}',
      "",
    ].join("\n");
    const errors = errorsOf(parse(text));
    expect(issueAt(errors, "/jobs/b/command").message).toMatch(/there is no job "nope"/);
    expect(issueAt(errors, "/jobs/b/command").line).toBe(lineOf(text, "outputs.nope"));
    expect(issueAt(errors, "/jobs/c/command/1").message).toMatch(/job "a" has no output "count" \(it captures rows\)/);
    expect(issueAt(errors, "/jobs/d/env/ROWS").message).toMatch(/job "a" is not upstream of "d"/);
    const ok = parse("jobs:\n  a:\n    command: x\n    output: {rows: last_line}\n  b:\n    command: echo {{ outputs.a.rows }}\n    frequency: after:a\n");
    expect(ok.ok).toBe(true);
  });

  it("notify channels: unknown names and bad targets are config errors", () => {
    const text = [
      "integrations:",
      "  ops-chat: {provider: chat, webhook_url: https://chat.example/hook}",
      "jobs:",
      "  a:",
      "    command: x",
      "    notify:",
      "      on_failure: nowhere:#x",
      "      on_retry: [ops-chat:general]",
      "      on_success:",
      "        - channel: email:ops@example.org",
      "        - channel: pager:p1",
      "          attach_logs: last_20000_lines",
    ].join("\n");
    const errors = errorsOf(parse(text));
    expect(issueAt(errors, "/jobs/a/notify/on_failure").message).toMatch(/unknown integration or provider "nowhere"/);
    expect(issueAt(errors, "/jobs/a/notify/on_retry/0").message).toMatch(/chat target must be/);
    expect(issueAt(errors, "/jobs/a/notify/on_success/0/channel").message).toMatch(/smtp/);
    expect(issueAt(errors, "/jobs/a/notify/on_success/1/channel").message).toMatch(/pager/);
    expect(issueAt(errors, "/jobs/a/notify/on_success/1/attach_logs").line).toBe(lineOf(text, "attach_logs"));
  });

  it("an empty or non-map file", () => {
    expect(errorsOf(parse(""))[0]!.message).toMatch(/empty/);
    expect(errorsOf(parse("- a\n- b\n"))[0]!.message).toMatch(/must be a map/);
    expect(issueAt(errorsOf(parse("defaults: {}\n")), "/jobs").message).toMatch(/missing required field "jobs"/);
  });

  it("YAML syntax errors carry their position", () => {
    const text = "jobs:\n  a:\n    command: x\n   bad: [\n";
    const errors = errorsOf(parse(text));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]!.message).toMatch(/^YAML: /);
    expect(errors[0]!.line).toBeGreaterThanOrEqual(3);
    expect(errors.every((e) => !e.message.includes("\n"))).toBe(true);
  });

  it("duplicate keys are reported with their line", () => {
    const text = "jobs:\n  a:\n    command: x\n  a:\n    command: y\n";
    const errors = errorsOf(parse(text));
    expect(errors[0]!.message).toMatch(/unique/);
    expect(errors[0]!.line).toBe(4);
  });
});

describe("the loaded ProjectConfig", () => {
  it("applies defaults: job value, then defaults block, then schema defaults", () => {
    const text = [
      "defaults:",
      "  timezone: Europe/Berlin",
      "  retries: 2",
      "  tags: [team-a]",
      "  env: {A: from-defaults, B: from-defaults}",
      "  notify: {on_failure: webhook:https://hooks.example/x}",
      "jobs:",
      "  a:",
      "    command: x",
      "    retries: 5",
      "    env: {B: own}",
      "  b:",
      "    command: [echo, hi]",
      "    timezone: Asia/Tokyo",
    ].join("\n");
    const p = valueOf(parse(text));
    const a = p.jobs.get("a")!;
    const b = p.jobs.get("b")!;
    expect(a.retries).toBe(5);
    expect(b.retries).toBe(2);
    expect(a.tags).toEqual(["team-a"]);
    expect(a.env).toEqual({ A: "from-defaults", B: "own" });
    expect(a.notify.on_failure?.[0]).toEqual({
      channel: "webhook:https://hooks.example/x",
      message: null,
      attachLogs: null,
      onlyAfterFailure: false,
    });
    expect(a.schedule.timezone).toBe("Europe/Berlin");
    expect(b.schedule.timezone).toBe("Asia/Tokyo");
    expect(b.command).toEqual(["echo", "hi"]);
    expect(a).toMatchObject({
      onFailure: "alert",
      concurrency: "forbid",
      catchup: false,
      timeoutMs: null,
      slaMs: null,
      retryDelay: { kind: "exponential" },
      healthcheck: null,
      description: null,
    });
    expect(p.defaultTimezone).toBe("Europe/Berlin");
  });

  it("frequency default: after-semantics with depends_on, else defaults.frequency, else manual", () => {
    const text = [
      "defaults: {frequency: daily, time: '0300'}",
      "jobs:",
      "  up: {command: x}",
      "  dep: {command: x, depends_on: [up]}",
      "  explicit: {command: x, frequency: after:up}",
      "  manual: {command: x, frequency: manual}",
    ].join("\n");
    const p = valueOf(parse(text));
    expect(p.jobs.get("up")!.schedule).toMatchObject({ frequency: "daily", time: { hour: 3, minute: 0 } });
    expect(p.jobs.get("dep")!).toMatchObject({ after: null, dependencyTriggered: true, upstreams: ["up"] });
    expect(p.jobs.get("dep")!.schedule.frequency).toBe("after");
    expect(p.jobs.get("explicit")!).toMatchObject({ after: "up", dependencyTriggered: true, upstreams: ["up"] });
    expect(p.jobs.get("manual")!.schedule).toMatchObject({ frequency: "manual", time: null });
    expect(valueOf(parse("jobs:\n  a: {command: x}\n")).jobs.get("a")!.schedule.frequency).toBe("manual");
  });

  it("weekly and monthly defaults; durations, retry delays, healthcheck, outputs", () => {
    const text = [
      "jobs:",
      "  w: {command: x, frequency: weekly, time: '0930'}",
      "  m: {command: x, frequency: monthly, time: '0000', day_of_month: 31}",
      "  r:",
      "    command: x",
      "    timeout: 1h30m",
      "    sla: 90s",
      "    retry_delay: fixed:2m",
      "    healthcheck: {command: curl -f localhost}",
      "    output: {a: last_line, b: first_line, c: exit_code, d: 'json_field:x.y', e: 'regex:rows=(\\d+)'}",
    ].join("\n");
    const p = valueOf(parse(text));
    expect(p.jobs.get("w")!.schedule).toMatchObject({ weekday: "mon", dayOfMonth: null, time: { hour: 9, minute: 30 } });
    expect(p.jobs.get("m")!.schedule).toMatchObject({ weekday: null, dayOfMonth: 31 });
    const r = p.jobs.get("r")!;
    expect(r).toMatchObject({ timeoutMs: 5_400_000, slaMs: 90_000, retryDelay: { kind: "fixed", ms: 120_000 } });
    expect(r.healthcheck).toEqual({ command: "curl -f localhost", timeoutMs: 30_000, onFail: "mark_failed" });
    expect(r.output).toEqual({
      a: { kind: "last_line" },
      b: { kind: "first_line" },
      c: { kind: "exit_code" },
      d: { kind: "json_field", key: "x.y" },
      e: { kind: "regex", pattern: "rows=(\\d+)" },
    });
  });

  it("keeps env values unresolved and the graph in ProjectConfig", () => {
    const text = "jobs:\n  a: {command: x, env: {T: '${env:TOKEN}'}}\n  b: {command: y, frequency: after:a}\n";
    const p = valueOf(parse(text, { TOKEN: "secret" }));
    expect(p.jobs.get("a")!.env.T).toBe("${env:TOKEN}");
    expect(p.graph.order).toEqual(["a", "b"]);
    expect(p.graph.downstreams("a")).toEqual(["b"]);
    expect(Object.isFrozen(p.jobs.get("a"))).toBe(true);
    expect(Object.isFrozen(p.jobs.get("a")!.env)).toBe(true);
  });

  it("notify entries: shorthand, object and lists; attach_logs", () => {
    const text = [
      "integrations:",
      "  ops-chat: {provider: chat, webhook_url: https://chat.example/hook}",
      "  pager: {routing_key: abc}",
      "  smtp: {host: mail.local, from: svc@example.org}",
      "  hook: {provider: webhook, webhook_url: https://hook.example}",
      "jobs:",
      "  a:",
      "    command: x",
      "    notify:",
      "      on_failure: [ops-chat:#data, pager:p2, 'email:ops@example.org', 'hook:']",
      "      on_success: {channel: chat:@ann, message: 'ok {{ job.name }}', attach_logs: all, only_after_failure: true}",
      "      on_retry: {channel: webhook:https://other.example/x, attach_logs: last_50_lines}",
    ].join("\n");
    const a = valueOf(parse(text)).jobs.get("a")!;
    expect(a.notify.on_failure!.map((e) => e.channel)).toEqual(["ops-chat:#data", "pager:p2", "email:ops@example.org", "hook:"]);
    expect(a.notify.on_success).toEqual([{ channel: "chat:@ann", message: "ok {{ job.name }}", attachLogs: "all", onlyAfterFailure: true }]);
    expect(a.notify.on_retry![0]!.attachLogs).toEqual({ lastLines: 50 });
  });
});

describe("integrations and ${env:VAR}", () => {
  const text = [
    "integrations:",
    "  ops-chat: {provider: chat, webhook_url: '${env:CHAT_URL}'}",
    "  pager: {routing_key: '${env:PD_KEY}'}",
    "  smtp: {host: mail.local, from: svc@example.org, username: '${env:SMTP_USER}', password: '${env:SMTP_PASS}'}",
    "jobs: {}",
  ].join("\n");

  it("resolves from the process env first, then .env beside svc.yaml", () => {
    const dir = tempProject({ "svc.yaml": text, ".env": "CHAT_URL=https://dotenv.example\nPD_KEY=from-dotenv\nSMTP_USER=u\nSMTP_PASS=p\n" });
    const p = valueOf(loadProject(join(dir, "svc.yaml"), { PD_KEY: "from-process" }));
    expect(p.integrations.get("ops-chat")).toMatchObject({ webhookUrl: "https://dotenv.example", credentialStatus: "configured" });
    expect(p.integrations.get("pager")).toMatchObject({ provider: "pager", routingKey: "from-process" });
    expect(p.integrations.get("smtp")).toMatchObject({ port: 587, username: "u", password: "p", credentialStatus: "configured" });
    expect(p.dotenv).toMatchObject({ CHAT_URL: "https://dotenv.example" });
  });

  it("unset variables: status env var unset, field null, a warning with the line", () => {
    const r = parse(text, { SMTP_USER: "u", SMTP_PASS: "p", PD_KEY: "" });
    const p = valueOf(r);
    expect(p.integrations.get("ops-chat")).toMatchObject({ webhookUrl: null, credentialStatus: "env var unset", unsetVars: ["CHAT_URL"] });
    expect(p.integrations.get("pager")!.credentialStatus).toBe("missing required fields");
    const w = issueAt(r.warnings, "/integrations/ops-chat/webhook_url");
    expect(w.line).toBe(2);
    expect(w.message).toMatch(/CHAT_URL/);
  });
});

describe("strict warnings", () => {
  it("missing descriptions are warnings with the job's line", () => {
    const text = "jobs:\n  a: {command: x, description: does a}\n  b:\n    command: y\n";
    const r = parse(text);
    expect(r.ok).toBe(true);
    const w = issueAt(r.warnings, "/jobs/b");
    expect(w.line).toBe(3);
    expect(w.message).toMatch(/no description/);
    expect(valueOf(r).warnings).toEqual(r.warnings);
  });
});

describe("loadProject on bad files never throws", () => {
  const dir = tempProject();
  const cases: [string, () => string, RegExp][] = [
    ["missing file", () => join(dir, "nope.yaml"), /no such file/],
    ["directory", () => dir, /is a directory/],
    [
      "binary garbage",
      () => {
        const f = join(dir, "bin.yaml");
        writeFileSync(f, Buffer.from([0x6a, 0x6f, 0x62, 0x73, 0x3a, 0x0a, 0x00, 0xff, 0xfe, 0x01]));
        return f;
      },
      /not a text file/,
    ],
    [
      "invalid UTF-8",
      () => {
        const f = join(dir, "latin1.yaml");
        writeFileSync(f, Buffer.concat([Buffer.from("jobs:\n  caf"), Buffer.from([0xe9]), Buffer.from(": {command: x}\n")]));
        return f;
      },
      /not valid UTF-8/,
    ],
    [
      "10 MB file",
      () => {
        const f = join(dir, "big.yaml");
        writeFileSync(f, "# padding\n".repeat(1_048_576));
        return f;
      },
      /too large/,
    ],
  ];
  it.each(cases)("%s", (_name, make, message) => {
    const r = loadProject(make());
    const [e, ...rest] = errorsOf(r);
    expect(rest).toEqual([]);
    expect(e!.message).toMatch(message);
  });

  it("reports the position of invalid UTF-8", () => {
    const f = join(dir, "pos.yaml");
    writeFileSync(f, Buffer.concat([Buffer.from("jobs:\n  caf"), Buffer.from([0xe9]), Buffer.from(": {}\n")]));
    expect(errorsOf(loadProject(f))[0]).toMatchObject({ line: 2, column: 6 });
  });
});

describe("effectiveView", () => {
  it("is plain JSON in the YAML vocabulary with secrets and env values redacted", () => {
    const text = [
      "integrations:",
      "  smtp: {host: mail.local, from: a@b.c, username: u, password: hunter2}",
      "  ops: {provider: chat, webhook_url: https://chat.example/T0K3N}",
      "jobs:",
      "  a:",
      "    command: x",
      "    frequency: daily",
      "    time: '0230'",
      "    timeout: 90m",
      "    env: {TOKEN: abc, PLAIN: visible}",
      "  b: {command: y, depends_on: [a]}",
    ].join("\n");
    const view = effectiveView(valueOf(parse(text)), { redact: true });
    const json = JSON.stringify(view);
    for (const secret of ["hunter2", "T0K3N", "abc", "visible"]) expect(json).not.toContain(secret);
    const jobs = view.jobs as Record<string, Record<string, unknown>>;
    expect(jobs.a).toMatchObject({ time: "0230", timeout: "1h30m", retry_delay: "exponential", env: { TOKEN: "***", PLAIN: "***" } });
    expect(jobs.b!.frequency).toBe("after:a");
    expect((view.integrations as Record<string, Record<string, unknown>>).smtp).toMatchObject({ username: "***", password: "***", port: 587 });
    expect(JSON.parse(json)).toEqual(view);
  });

  it("a secret anchored in a plain field and aliased into a secret one is *** in both; the same text unanchored elsewhere is not", () => {
    const text = [
      "jobs:",
      "  a:",
      "    command: echo",
      "    description: &t s3cret-anchored",
      "    tags: [*t, visible-tag]",
      "    env: {TOKEN: *t}",
      "  b:",
      "    command: echo",
      "    description: a plain description",
      "    env: {MODE: a plain description}",
    ].join("\n");
    const project = valueOf(parse(text));
    expect(project.exposedSecrets).toEqual(["s3cret-anchored"]);
    // The description is hidden in the model (the job list and notifications show it); env keeps the value to run with.
    expect(project.jobs.get("a")!.description).toBe("***");
    expect(project.jobs.get("a")!.env.TOKEN).toBe("s3cret-anchored");
    const view = effectiveView(project, { redact: true });
    expect(JSON.stringify(view)).not.toContain("s3cret");
    const jobs = view.jobs as Record<string, Record<string, unknown>>;
    expect(jobs.a).toMatchObject({ description: "***", tags: ["***", "visible-tag"], env: { TOKEN: "***" } });
    // Only values an alias carries into a secret place: an env value written out is not hidden elsewhere.
    expect(jobs.b!.description).toBe("a plain description");
    expect(valueOf(parse(text.replace("env: {TOKEN: *t}", "env: {TOKEN: other}"))).exposedSecrets).toEqual([]);
  });
});

describe("limits a job's values must keep", () => {
  it("two outputs reaching one job under one variable name (rows and ROWS; jobs x-y and x_y) are an error; unrelated jobs may share one", () => {
    const r = parse(
      `jobs:\n  a:\n    command: x\n    output: {rows: first_line, ROWS: last_line}\n  x-y:\n    command: x\n    output: {n: first_line}\n  x_y:\n    command: x\n    output: {n: first_line}\n` +
        `  b:\n    command: x\n    depends_on: [a, x-y, x_y]\n`,
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => `${e.path}: ${e.message}`)).toEqual([
      "/jobs/a/output/ROWS: outputs.a.ROWS and outputs.a.rows both reach job b as SVC_OUTPUT_A_ROWS: rename one",
      "/jobs/x_y/output/n: outputs.x_y.n and outputs.x-y.n both reach job b as SVC_OUTPUT_X_Y_N: rename one",
    ]);
    // export.db_size and export_db.size share SVC_OUTPUT_EXPORT_DB_SIZE, but no job gets both.
    expect(parse(`jobs:\n  export:\n    command: x\n    output: {db_size: first_line}\n  export_db:\n    command: x\n    output: {size: first_line}\n`).ok).toBe(true);
  });

  it("an impossible date in defaults.exclude.dates is an error, reported once whatever the number of jobs", () => {
    const r = parse(
      `defaults:\n  exclude: {dates: ["2026-02-30", "2026-12-25"]}\njobs:\n  a:\n    command: x\n    frequency: daily\n    time: "0200"\n  b:\n    command: x\n    frequency: daily\n    time: "0300"\n`,
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => `${e.path}:${e.line}: ${e.message}`)).toEqual(['/defaults/exclude/dates/0:2: "2026-02-30" is not a date of the calendar']);
  });

  it("timeouts at most 24d (a long retry delay is fine: it waits on the clock), a healthcheck timeout above 0; {{ params.constructor }} names no param", () => {
    const r = parse(
      `jobs:\n  a:\n    command: x\n    timeout: 30d\n  b:\n    command: x\n    healthcheck: {command: x, timeout: 0s}\n  c:\n    command: x\n    retries: 1\n    retry_delay: "fixed:100d"\n  d:\n    command: "echo {{ params.constructor }}"\n  e:\n    command: x\n    healthcheck: {command: x, timeout: 25d}\n`,
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => `${e.path}: ${e.message}`)).toEqual([
      "/jobs/a/timeout: timeout must be at most 24d (a timer cannot wait longer)",
      "/jobs/b/healthcheck/timeout: must be greater than 0",
      '/jobs/d/command: {{ params.constructor }}: job "d" declares no param "constructor" (declare it under jobs.d.params)',
      "/jobs/e/healthcheck/timeout: must be at most 24d (a timer cannot wait longer)",
    ]);
  });
});
