/**
 * Hostile and random input, as properties (fast-check):
 *
 * - the config loader (src/config/robustness.test.ts already shows it never
 *   throws on random text): a random *valid* svc.yaml loads with exactly the
 *   values written, and one invalid value anywhere gives an error whose path
 *   is that field and whose line is that field's line;
 * - the notification template renderer (src/notify/template.test.ts already
 *   shows it never throws and leaves brace-free text alone): output equals a
 *   model of literal text plus values, values are inserted verbatim (never
 *   expanded again, never read as replacement patterns), unknown names are
 *   reported once each, and the default message of any run reads cleanly.
 *
 * (Schedule properties live in src/schedule/nextRun.property.test.ts.)
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseProjectText } from "../../src/config/project.js";
import type { JobConfig } from "../../src/config/types.js";
import { DEFAULT_MESSAGE, TEMPLATE_VARIABLES, renderTemplate, templateVars } from "../../src/notify/template.js";
import { job as notifyJob, run as notifyRun } from "../../src/notify/testkit.js";
import { pick } from "./helpers/relKit.js";

const RUNS = pick(150, 2_000);

// ---------------------------------------------------------------- config

const ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham"];
const FREQUENCIES = ["hourly", "daily", "weekly", "monthly", "weekdays", "weekends", "manual"] as const;
const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;

interface GenJob {
  name: string;
  fields: Record<string, unknown>;
}

const jobName = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,20}$/);
const tag = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,31}$/);
const hhmm = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })).map(([h, m]) => `${String(h).padStart(2, "0")}${String(m).padStart(2, "0")}`);
/** Commands that are plain text (no output placeholders, which the loader checks against upstreams). */
const command = fc.oneof(
  fc.string({ minLength: 1, maxLength: 60 }).filter((s) => !s.includes("{{") && s.trim() !== ""),
  fc.array(fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !s.includes("{{")), { minLength: 1, maxLength: 4 }),
);

const jobFields = fc.record(
  {
    command,
    frequency: fc.constantFrom(...FREQUENCIES),
    time: hhmm,
    weekday: fc.constantFrom(...WEEKDAYS),
    day_of_month: fc.integer({ min: 1, max: 31 }),
    timezone: fc.constantFrom(...ZONES),
    retries: fc.integer({ min: 0, max: 100 }),
    tags: fc.uniqueArray(tag, { maxLength: 10 }),
    on_failure: fc.constantFrom("alert", "skip", "stop", "ignore"),
    concurrency: fc.constantFrom("allow", "forbid", "replace"),
    catchup: fc.boolean(),
    timeout_s: fc.integer({ min: 2, max: 86_400 }),
    sla_frac: fc.double({ min: 0, max: 0.99, noNaN: true }),
    retry_delay: fc.oneof(fc.constant("exponential"), fc.integer({ min: 1, max: 3_600 }).map((s) => `fixed:${s}s`)),
    description: fc.string({ maxLength: 30 }),
  },
  { requiredKeys: ["command", "frequency"] },
);

/** Random valid projects: unique names, time fields only where the frequency takes them, depends_on to earlier jobs. */
const project = fc
  .uniqueArray(fc.tuple(jobName, jobFields, fc.array(fc.nat(), { maxLength: 3 })), { minLength: 1, maxLength: 6, selector: ([n]) => n })
  .map((list) =>
    list.map(([name, f], i): GenJob => {
      const fields: Record<string, unknown> = { command: f.command, frequency: f.frequency };
      const timed = f.frequency !== "hourly" && f.frequency !== "manual";
      if (timed) fields.time = f.time ?? "0230";
      if (f.frequency === "weekly" && f.weekday) fields.weekday = f.weekday;
      if (f.frequency === "monthly" && f.day_of_month) fields.day_of_month = f.day_of_month;
      for (const k of ["timezone", "retries", "tags", "on_failure", "concurrency", "catchup", "retry_delay", "description"] as const) if (f[k] !== undefined) fields[k] = f[k];
      if (f.timeout_s !== undefined) {
        fields.timeout = `${f.timeout_s}s`;
        if (f.sla_frac !== undefined) fields.sla = `${Math.max(1, Math.floor(f.timeout_s * f.sla_frac))}s`;
      }
      void i;
      return { name, fields };
    }),
  )
  .chain((jobs) =>
    fc.tuple(fc.constant(jobs), fc.array(fc.array(fc.nat(), { maxLength: 2 }), { minLength: jobs.length, maxLength: jobs.length })).map(([js, deps]) =>
      js.map((j, i) => {
        const ups = [...new Set(deps[i]!.filter(() => i > 0).map((d) => js[d % i]!.name))];
        return ups.length > 0 ? { ...j, fields: { ...j.fields, depends_on: ups } } : j;
      }),
    ),
  );

/** svc.yaml text with one field per line (values in JSON, which is YAML), and the line of every field. */
function render(jobs: GenJob[]): { text: string; lines: Map<string, number> } {
  const out = ["jobs:"];
  const lines = new Map<string, number>();
  for (const j of jobs) {
    out.push(`  ${JSON.stringify(j.name)}:`);
    for (const [k, v] of Object.entries(j.fields)) {
      out.push(`    ${k}: ${JSON.stringify(v)}`);
      lines.set(`${j.name}/${k}`, out.length);
    }
  }
  return { text: `${out.join("\n")}\n`, lines };
}

const seconds = (d: unknown) => Number(String(d).replace(/s$/, "")) * 1000;

function expectLoaded(j: GenJob, c: JobConfig): void {
  const f = j.fields;
  expect(c.name).toBe(j.name);
  expect(c.command).toEqual(f.command);
  expect(c.schedule.frequency).toBe(f.depends_on && f.frequency === undefined ? "after" : f.frequency);
  if (f.time) expect(c.schedule.time).toEqual({ hour: Number(String(f.time).slice(0, 2)), minute: Number(String(f.time).slice(2)) });
  if (f.timezone) expect(c.schedule.timezone).toBe(f.timezone);
  if (f.weekday) expect(c.schedule.weekday).toBe(f.weekday);
  if (f.day_of_month) expect(c.schedule.dayOfMonth).toBe(f.day_of_month);
  expect(c.retries).toBe(f.retries ?? 0);
  expect(c.tags).toEqual(f.tags ?? []);
  expect(c.onFailure).toBe(f.on_failure ?? "alert");
  expect(c.concurrency).toBe(f.concurrency ?? "forbid");
  expect(c.catchup).toBe(f.catchup ?? false);
  expect(c.timeoutMs).toBe(f.timeout ? seconds(f.timeout) : null);
  expect(c.slaMs).toBe(f.sla ? seconds(f.sla) : null);
  expect(c.dependsOn).toEqual(f.depends_on ?? []);
  expect(c.description).toBe(f.description ?? null);
  if (typeof f.retry_delay === "string" && f.retry_delay.startsWith("fixed:")) expect(c.retryDelay).toEqual({ kind: "fixed", ms: seconds(f.retry_delay.slice(6)) });
}

/** One invalid value per field, as SPEC/CONTRACT reject them. */
const CORRUPTIONS: [field: string, value: unknown, applies?: (j: GenJob) => boolean][] = [
  ["time", "2561", (j) => "time" in j.fields],
  ["time", "24:00", (j) => "time" in j.fields],
  ["time", 230, (j) => "time" in j.fields],
  ["frequency", "yearly"],
  ["timezone", "Mars/Olympus_Mons"],
  ["on_failure", "explode"],
  ["concurrency", "sometimes"],
  ["retry_delay", "fixed:soon"],
  ["retries", 101],
  ["retries", -1],
  ["tags", ["Not A Tag"]],
  ["tags", Array.from({ length: 11 }, (_, i) => `t${i}`)],
  ["timeout", "ten minutes"],
  ["sla", "2d", (j) => "timeout" in j.fields && seconds(j.fields.timeout) < 172_800_000],
  ["depends_on", ["no-such-job-anywhere"]],
  ["colour", "blue"],
  ["weekday", "someday", (j) => j.fields.frequency === "weekly"],
  ["day_of_month", 32, (j) => j.fields.frequency === "monthly"],
];

describe("config loader properties", () => {
  it("a random valid svc.yaml loads with exactly the values written", () => {
    fc.assert(
      fc.property(project, (jobs) => {
        const { text } = render(jobs);
        const r = parseProjectText(text, "/nonexistent/svc.yaml", {});
        if (!r.ok) throw new Error(`rejected:\n${text}\n${r.errors.map((e) => `${e.line}:${e.column} ${e.path} ${e.message}`).join("\n")}`);
        expect([...r.value.jobs.keys()]).toEqual(jobs.map((j) => j.name));
        for (const j of jobs) expectLoaded(j, r.value.jobs.get(j.name)!);
      }),
      { numRuns: RUNS },
    );
  });

  it("keeps file order for integer-like job names (found by the property above)", () => {
    const r = parseProjectText('jobs:\n  b: {command: "true"}\n  "42": {command: "true"}\n  a: {command: "true"}\n  "0": {command: "true"}\n', "/nonexistent/svc.yaml", {});
    expect(r.ok && [...r.value.jobs.keys()]).toEqual(["b", "42", "a", "0"]);
  });

  it("one invalid value anywhere is an error at that field's path and line", () => {
    fc.assert(
      fc.property(project, fc.nat(), fc.nat(), (jobs, whichJob, whichFault) => {
        const target = jobs[whichJob % jobs.length]!;
        const usable = CORRUPTIONS.filter(([, , applies]) => !applies || applies(target));
        const [field, value] = usable[whichFault % usable.length]!;
        const broken = jobs.map((j) => (j === target ? { ...j, fields: { ...j.fields, [field]: value } } : j));
        const { text, lines } = render(broken);
        const r = parseProjectText(text, "/nonexistent/svc.yaml", {});
        expect(r.ok, `accepted ${field}: ${JSON.stringify(value)}\n${text}`).toBe(false);
        if (r.ok) return;
        const pointer = `/jobs/${target.name.replace(/~/g, "~0").replace(/\//g, "~1")}/${field}`;
        const hit = r.errors.find((e) => e.path === pointer || e.path.startsWith(`${pointer}/`));
        expect(hit, `no error at ${pointer} for ${JSON.stringify(value)}; got ${r.errors.map((e) => `${e.line} ${e.path} ${e.message}`).join("; ")}`).toBeDefined();
        expect(hit!.line, `${pointer}: ${hit!.message}`).toBe(lines.get(`${target.name}/${field}`));
        expect(hit!.message).not.toContain("\n");
      }),
      { numRuns: RUNS },
    );
  });
});

// ---------------------------------------------------------------- templates

const varName = fc.oneof(fc.constantFrom(...TEMPLATE_VARIABLES), fc.constantFrom("job.nope", "outputs.a.b", "__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "run", ""));
/** Values that would misbehave if they were expanded again or read as String.replace patterns. */
const nastyValue = fc.oneof(fc.string(), fc.constantFrom("{{ run.id }}", "{{job.name}}", "$&", "$1", "$$", "$'", "$`", "$<x>", "\u0000", "}}", "{{", "😀", "\r\n"));
const space = fc.constantFrom("", " ", "  ", "\t");

type Part = { literal: string } | { name: string; pad: [string, string] };
const part: fc.Arbitrary<Part> = fc.oneof(
  fc.record({ literal: fc.string().map((s) => s.replace(/[{}]/g, "")) }),
  fc.record({ name: varName, pad: fc.tuple(space, space) }),
);

describe("template renderer properties", () => {
  it("output is the literal text with each known value inserted verbatim; unknown names render empty and are reported once each, in order", () => {
    fc.assert(
      fc.property(fc.array(part, { maxLength: 12 }), fc.array(nastyValue, { minLength: TEMPLATE_VARIABLES.length, maxLength: TEMPLATE_VARIABLES.length }), (parts, values) => {
        const vars: Record<string, string> = Object.fromEntries(TEMPLATE_VARIABLES.map((n, i) => [n, values[i]!]));
        const template = parts.map((p) => ("literal" in p ? p.literal : `{{${p.pad[0]}${p.name}${p.pad[1]}}}`)).join("");
        const unknown: string[] = [];
        const out = renderTemplate(template, vars, (n) => unknown.push(n));
        const expected = parts.map((p) => ("literal" in p ? p.literal : Object.hasOwn(vars, p.name) ? vars[p.name]! : "")).join("");
        expect(out).toBe(expected);
        expect(unknown).toEqual(parts.filter((p): p is Extract<Part, { name: string }> => "name" in p && !Object.hasOwn(vars, p.name)).map((p) => p.name));
      }),
      { numRuns: RUNS * 4 },
    );
  });

  it("the default message of any run reads cleanly, and a reason full of placeholders is shown as written", () => {
    const runRecord = fc.record({
      id: fc.integer({ min: 1, max: 2 ** 31 }),
      status: fc.constantFrom("PENDING", "RUNNING", "SUCCESS", "FAILED", "RETRYING", "SKIPPED" as const),
      attempt: fc.integer({ min: 1, max: 101 }),
      reason: fc.option(nastyValue, { nil: null }),
      exit_code: fc.option(fc.integer({ min: -255, max: 255 }), { nil: null }),
      started_at: fc.option(fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString()), { nil: null }),
      duration_ms: fc.option(fc.nat(), { nil: null }),
      error: fc.option(nastyValue, { nil: null }),
      hc_status: fc.constantFrom(null, "pass", "fail", "warn" as const),
    });
    fc.assert(
      fc.property(runRecord, fc.string({ minLength: 1, maxLength: 20 }), (r, name) => {
        const vars = templateVars(notifyJob(name), notifyRun(r as never), "on_failure");
        for (const n of TEMPLATE_VARIABLES) expect(typeof vars[n], n).toBe("string");
        const msg = renderTemplate(DEFAULT_MESSAGE, vars, (n) => {
          throw new Error(`default message uses unknown ${n}`);
        });
        expect(msg).not.toMatch(/undefined|\[object |NaN/);
        expect(msg).toContain(`run ${r.id}`);
        expect(renderTemplate("[{{ run.reason }}]", vars)).toBe(`[${r.reason ?? ""}]`);
        expect(renderTemplate("{{ run.error }}", vars)).toBe(r.error ?? "");
      }),
      { numRuns: RUNS * 2 },
    );
  });
});
