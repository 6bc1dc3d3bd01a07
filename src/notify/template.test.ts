import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_MESSAGE, TEMPLATE_VARIABLES, formatDuration, renderTemplate, templateVars } from "./template.js";
import { job, run } from "./testkit.js";

describe("renderTemplate", () => {
  const vars = { "job.name": "backup", "run.id": "7", event: "on_failure" };

  it("substitutes variables with or without spaces inside the braces", () => {
    expect(renderTemplate("{{job.name}} #{{ run.id }} {{   event   }}", vars)).toBe("backup #7 on_failure");
  });

  it("renders unknown variables empty and reports each one", () => {
    const unknown: string[] = [];
    const out = renderTemplate("a{{ job.nope }}b{{ outputs.x.y }}c", vars, (n) => unknown.push(n));
    expect(out).toBe("abc");
    expect(unknown).toEqual(["job.nope", "outputs.x.y"]);
  });

  it("never evaluates code and never HTML-escapes", () => {
    const out = renderTemplate("{{ constructor }}{{ 1+1 }}{{ job.name.constructor }}{{ __proto__ }}", vars);
    expect(out).toBe("");
    expect(renderTemplate("{{ job.name }}", { "job.name": "<b>&'\"" })).toBe("<b>&'\"");
  });

  it("leaves unbalanced braces as written", () => {
    expect(renderTemplate("{{ job.name", vars)).toBe("{{ job.name");
    expect(renderTemplate("}} {job.name} {{{ job.name }}}", vars)).toBe("}} {job.name} {backup}");
  });

  it("survives a throwing onUnknown hook", () => {
    expect(
      renderTemplate("x{{ y }}", {}, () => {
        throw new Error("boom");
      }),
    ).toBe("x");
  });

  it("property: random templates never throw", () => {
    const pieces = fc.oneof(
      fc.string(),
      fc.constantFrom("{{", "}}", "{", "}", " ", ".", "job.name", "{{ run.id }}", "{{ nope }}"),
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 20 }), fc.dictionary(fc.string(), fc.anything()), (parts, extra) => {
        const out = renderTemplate(parts.join(""), { ...extra, ...vars }, () => {});
        expect(typeof out).toBe("string");
      }),
      { numRuns: 500 },
    );
  });

  it("property: text without '{{' is returned unchanged", () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !s.includes("{{")),
        (s) => {
          expect(renderTemplate(s, vars, () => {})).toBe(s);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("templateVars", () => {
  it("builds every variable of CONTRACT §6", () => {
    const v = templateVars(
      job("backup", { description: "nightly", tags: ["db", "prod"], schedule: { frequency: "daily", time: { hour: 2, minute: 30 }, weekday: null, dayOfMonth: null, timezone: "UTC" } }),
      run({ reason: "manual fix", hc_status: "warn", error: "timeout after 5s" }),
      "on_failure",
    );
    expect(Object.keys(v).sort()).toEqual([...TEMPLATE_VARIABLES].sort());
    expect(v).toMatchObject({
      "job.name": "backup",
      "job.description": "nightly",
      "job.tags": "db, prod",
      "job.frequency": "daily",
      "run.id": "7",
      "run.status": "FAILED",
      "run.attempt": "2",
      "run.trigger": "schedule",
      "run.triggered_by": "scheduler",
      "run.reason": "manual fix",
      "run.exit_code": "3",
      "run.duration": "1m 5s",
      "run.sla_breached": "0",
      "run.hc_status": "warn",
      "run.error": "timeout after 5s",
      event: "on_failure",
    });
  });

  it("shows after:<job> frequencies and a missing exit code", () => {
    const v = templateVars(job("load", { after: "extract", schedule: { frequency: "after", time: null, weekday: null, dayOfMonth: null, timezone: "UTC" } }), run({ exit_code: null, duration_ms: null, finished_at: null }), "on_retry");
    expect(v["job.frequency"]).toBe("after:extract");
    expect(v["run.exit_code"]).toBe("none");
    expect(v["run.duration"]).toBe("");
  });

  it("renders the default message", () => {
    expect(renderTemplate(DEFAULT_MESSAGE, templateVars(job("backup"), run(), "on_failure"))).toBe(
      "svc: job backup FAILED (run 7, attempt 2, exit 3)",
    );
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0ms"],
    [350, "350ms"],
    [1000, "1s"],
    [65_000, "1m 5s"],
    [3_600_000, "1h"],
    [3_661_000, "1h 1m 1s"],
    [90_061_000, "1d 1h 1m 1s"],
  ])("%i ms -> %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
