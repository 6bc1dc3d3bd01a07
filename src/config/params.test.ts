import { describe, expect, it } from "vitest";
import { checkParams, defaultParams } from "./params.js";
import { parseProjectText } from "./project.js";
import { errorsOf, issueAt, lineOf, valueOf } from "./testkit.js";
import { effectiveView } from "./views.js";

const FILE = "/nonexistent-dir/svc.yaml";
const parse = (text: string) => parseProjectText(text, FILE, {});

function expectError(text: string, pointer: string, marker: string, message: RegExp): void {
  const issue = issueAt(errorsOf(parse(text)), pointer);
  expect(issue.line, `${pointer}: ${issue.message}`).toBe(lineOf(text, marker));
  expect(issue.column).toBeGreaterThan(0);
  expect(issue.message).toMatch(message);
}

const manual = (params: string) => `jobs:\n  a:\n    command: x\n    params:\n${params}`;

describe("params declarations at load (CONTRACT §7.2)", () => {
  it("parses every field, in declaration order, defaults' params first", () => {
    const text =
      `defaults:\n  params:\n    env_name: {type: enum, values: [dev, prod], default: dev}\n` +
      `jobs:\n  a:\n    command: x\n    params:\n` +
      `      day: {type: string, pattern: "[0-9]{4}-[0-9]{2}-[0-9]{2}", description: the day}\n` +
      `      limit: {type: integer, default: 10}\n` +
      `      ratio: {type: number, default: 0.5}\n` +
      `      dry: {type: boolean, default: false}\n` +
      `      token: {secret: true, default: s3cret}\n` +
      `      note: {required: false}\n`;
    const job = valueOf(parse(text)).jobs.get("a")!;
    expect(Object.keys(job.params)).toEqual(["env_name", "day", "limit", "ratio", "dry", "token", "note"]);
    expect(job.params.day).toEqual({
      name: "day",
      type: "string",
      default: null,
      required: true,
      values: null,
      pattern: "[0-9]{4}-[0-9]{2}-[0-9]{2}",
      description: "the day",
      secret: false,
    });
    expect(job.params.env_name!.values).toEqual(["dev", "prod"]);
    expect(job.params.limit!.required).toBe(false);
    expect(job.params.token!.secret).toBe(true);
    expect(job.params.note!.required).toBe(false);
  });

  it("a job's declaration replaces the inherited one of the same name whole", () => {
    const text = `defaults:\n  params:\n    n: {type: integer, default: 1}\njobs:\n  a:\n    command: x\n    params:\n      n: {type: string, default: "x"}\n  b:\n    command: y\n`;
    const p = valueOf(parse(text));
    expect(p.jobs.get("a")!.params.n!.type).toBe("string");
    expect(p.jobs.get("b")!.params.n!.default).toBe(1);
  });

  it("bad names, types and fields are positioned errors", () => {
    expectError(manual(`      Day: {}\n`), "/jobs/a/params/Day", "Day:", /\[a-z_\]\[a-z0-9_\]\*/);
    expectError(manual(`      d: {type: date}\n`), "/jobs/a/params/d/type", "type: date", /string, integer, number, boolean, enum/);
    expectError(manual(`      d: {colour: red}\n`), "/jobs/a/params/d/colour", "colour", /unknown field/);
    expectError(manual(`      d: {type: integer, default: "10"}\n`), "/jobs/a/params/d/default", "default", /default must be an integer \(got "10"\)/);
    expectError(manual(`      d: {type: integer, default: 1.5}\n`), "/jobs/a/params/d/default", "default", /must be an integer/);
    expectError(manual(`      d: {type: boolean, default: yes please}\n`), "/jobs/a/params/d/default", "default", /true or false/);
    expectError(manual(`      d: {type: enum}\n`), "/jobs/a/params/d/values", "d: {type: enum}", /list its allowed values/);
    expectError(manual(`      d: {type: enum, values: [a, b], default: c}\n`), "/jobs/a/params/d/default", "default", /one of a, b \(got "c"\)/);
    expectError(manual(`      d: {values: [a]}\n`), "/jobs/a/params/d/values", "values", /only used by type: enum/);
    expectError(manual(`      d: {type: integer, pattern: "[0-9]+"}\n`), "/jobs/a/params/d/pattern", "pattern", /only used by type: string/);
    expectError(manual(`      d: {pattern: "(["}\n`), "/jobs/a/params/d/pattern", "pattern", /invalid regular expression/);
    expectError(manual(`      d: {pattern: "[a-z]+", default: "ABC"}\n`), "/jobs/a/params/d/default", "default", /must match the pattern/);
    expectError(manual(`      d: {required: true, default: x}\n`), "/jobs/a/params/d/required", "required", /has a default/);
  });

  it("a secret default that does not fit is reported without its value", () => {
    const issue = issueAt(errorsOf(parse(manual(`      d: {type: integer, secret: true, default: hunter2}\n`))), "/jobs/a/params/d/default");
    expect(issue.message).toBe("default must be an integer (got ***)");
  });

  it("at most 20 params, counting the inherited ones", () => {
    const many = Array.from({ length: 21 }, (_, i) => `      p${i}: {default: x}\n`).join("");
    expectError(manual(many), "/jobs/a/params", "params:", /at most 20/);
    const inherited = `defaults:\n  params:\n${Array.from({ length: 11 }, (_, i) => `    d${i}: {default: x}\n`).join("")}`;
    const own = Array.from({ length: 10 }, (_, i) => `      p${i}: {default: x}\n`).join("");
    const issue = issueAt(errorsOf(parse(inherited + manual(own))), "/jobs/a/params");
    expect(issue.message).toMatch(/21 params with those of defaults/);
  });

  it("a scheduled or dependency-triggered job needs a default for every param", () => {
    const text = `jobs:\n  a:\n    command: x\n    frequency: hourly\n    params:\n      day: {type: string}\n  b:\n    command: y\n    frequency: after:a\n    params:\n      n: {type: integer}\n`;
    const errors = errorsOf(parse(text));
    expect(issueAt(errors, "/jobs/a/params/day").message).toMatch(/has no default, but scheduled.*take the defaults/);
    expect(issueAt(errors, "/jobs/b/params/n").line).toBe(lineOf(text, "n: {type: integer}"));
  });

  it("the effective view shows declarations, a secret default as ***", () => {
    const view = effectiveView(valueOf(parse(manual(`      t: {secret: true, default: hunter2}\n      n: {type: integer, default: 3}\n`))));
    const params = (view.jobs as Record<string, { params: Record<string, { default: unknown }> }>).a!.params;
    expect(params.t!.default).toBe("***");
    expect(params.n!.default).toBe(3);
    expect(JSON.stringify(view)).not.toContain("hunter2");
  });
});

describe("checkParams: values a trigger passes", () => {
  const job = valueOf(
    parse(
      manual(
        `      day: {pattern: "[0-9]{4}-[0-9]{2}-[0-9]{2}"}\n` +
          `      limit: {type: integer, default: 10}\n` +
          `      ratio: {type: number, required: false}\n` +
          `      dry: {type: boolean, default: false}\n` +
          `      mode: {type: enum, values: [full, incremental], default: full}\n` +
          `      pin: {type: integer, secret: true, required: false}\n`,
      ),
    ),
  ).jobs.get("a")!;

  it("fills the defaults and keeps declaration order", () => {
    const r = checkParams(job.params, { dry: true, day: "2026-11-01" });
    expect(r).toEqual({ ok: true, values: { day: "2026-11-01", limit: 10, dry: true, mode: "full" } });
    expect(JSON.stringify((r as { values: object }).values)).toBe('{"day":"2026-11-01","limit":10,"dry":true,"mode":"full"}');
  });

  it("reports every bad value at params.NAME", () => {
    const r = checkParams(job.params, { day: "yesterday", limit: "10", ratio: "NaN", dry: "true", mode: "partial", extra: 1, pin: "1234" });
    expect(r.ok).toBe(false);
    const errors = (r as { errors: { path: string; message: string }[] }).errors;
    const by = Object.fromEntries(errors.map((e) => [e.path, e.message]));
    expect(by).toEqual({
      "params.day": "must match the pattern [0-9]{4}-[0-9]{2}-[0-9]{2} (the whole value)",
      "params.limit": 'must be an integer (got "10")',
      "params.ratio": 'must be a number (got "NaN")',
      "params.dry": 'must be true or false (got "true")',
      "params.mode": 'must be one of full, incremental (got "partial")',
      "params.extra": 'unknown param "extra": this job declares day, limit, ratio, dry, mode, pin',
      "params.pin": "must be an integer (got ***)",
    });
  });

  it("a missing required param, a non-object, a pattern matched only in part", () => {
    expect(checkParams(job.params, {})).toEqual({ ok: false, errors: [{ path: "params.day", message: "is required (a string matching [0-9]{4}-[0-9]{2}-[0-9]{2})" }] });
    expect(checkParams(job.params, ["x"])).toEqual({ ok: false, errors: [{ path: "params", message: "must be an object of param name -> value" }] });
    expect(checkParams(job.params, { day: "x2026-11-01" }).ok).toBe(false);
  });

  it("a NUL character is refused (no process can be given one), a secret's value never quoted; inherited names are unknown", () => {
    const secret = valueOf(parse(manual(`      tok: {secret: true, required: false}\n      note: {required: false}\n`))).jobs.get("a")!;
    expect(checkParams(secret.params, { tok: "hunter2\u0000x", note: "a\u0000b" })).toEqual({
      ok: false,
      errors: [
        { path: "params.tok", message: "must not contain a NUL character (\\0): no process can be given one" },
        { path: "params.note", message: "must not contain a NUL character (\\0): no process can be given one" },
      ],
    });
    for (const name of ["constructor", "toString", "hasOwnProperty", "__proto__"]) {
      expect(checkParams(secret.params, JSON.parse(`{"${name}": "x"}`))).toEqual({
        ok: false,
        errors: [{ path: `params.${name}`, message: `unknown param "${name}": this job declares tok, note` }],
      });
    }
  });

  it("defaultParams: the defaults alone", () => {
    expect(defaultParams(job.params)).toEqual({ limit: 10, dry: false, mode: "full" });
  });
});

describe("{{ params.NAME }} at load", () => {
  it("must name a declared param of the job, in command and env", () => {
    const text = `jobs:\n  a:\n    command: echo {{ params.days }}\n    env:\n      X: "{{ params.other }}"\n    params:\n      day: {default: x}\n  b:\n    command: ["echo", "{{ params.n }}"]\n`;
    const errors = errorsOf(parse(text));
    expect(issueAt(errors, "/jobs/a/command").message).toBe(`{{ params.days }}: job "a" declares no param "days" (did you mean "day"?) (it declares day)`);
    expect(issueAt(errors, "/jobs/a/env/X").line).toBe(lineOf(text, "X:"));
    expect(issueAt(errors, "/jobs/b/command/1").message).toMatch(/declare it under jobs.b.params/);
  });

  it("accepts declared params and {{ run.scheduled_at }}", () => {
    valueOf(parse(`jobs:\n  a:\n    command: echo {{ params.day }} {{ run.scheduled_at }}\n    params:\n      day: {default: x}\n`));
  });
});
