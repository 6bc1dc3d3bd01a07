/**
 * Run parameters over real HTTP against the real engine, store and
 * subprocesses (CONTRACT §7.2): values reach the command and the env, bad
 * values are 422 validation_failed with their paths and create no run,
 * secret values read *** in every view, a retry keeps the params.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKit, type ApiKit } from "./testkit.js";

const YAML = `
defaults:
  timezone: UTC
jobs:
  report:
    frequency: manual
    command: printf 'day=%s limit=%s dry=%s mode=%s env=%s|%s|%s slot=[%s]\\n' {{ params.day }} "{{ params.limit }}" '{{ params.dry }}' {{ params.mode }} "$SVC_PARAM_DAY" "$SVC_PARAM_RATIO" "$REPORT_MODE" "$SVC_SCHEDULED_AT"
    env:
      REPORT_MODE: "mode-{{ params.mode }}"
    params:
      day: {pattern: "[0-9]{4}-[0-9]{2}-[0-9]{2}", description: the day to report}
      limit: {type: integer, default: 10}
      ratio: {type: number, required: false}
      dry: {type: boolean, default: false}
      mode: {type: enum, values: [full, incremental], default: full}
      token: {secret: true, default: default-secret}
  argv:
    frequency: manual
    command: ["printf", "%s|", "{{ params.text }}", "{{ run.scheduled_at }}"]
    params:
      text: {}
  shell:
    frequency: manual
    command: printf '%s|' {{ params.text }} "<{{ params.text }}>" '<{{ params.text }}>'
    params:
      text: {}
  fails:
    frequency: manual
    command: echo "got $SVC_PARAM_PIN"; exit 1
    params:
      pin: {type: integer, secret: true}
      note: {default: n}
  hourly:
    command: echo "hourly $SVC_PARAM_LEVEL"
    frequency: hourly
    params:
      level: {type: integer, default: 3}
  pair_plain:
    frequency: manual
    tags: [pair]
    command: "true"
  pair_needs:
    frequency: manual
    tags: [pair]
    command: "true"
    params:
      day: {}
`;

let k: ApiKit;
beforeAll(async () => {
  k = await apiKit(YAML);
});
afterAll(async () => {
  await k?.close();
});

async function logText(id: number): Promise<string> {
  const r = await k.get(`/api/runs/${id}/logs`);
  return (r.body.lines as { line: string }[]).filter((l) => !l.line.startsWith("--- attempt")).map((l) => l.line).join("\n");
}

async function runWith(job: string, params: unknown): Promise<{ id: number; status: number; body: ReturnType<typeof JSON.parse> }> {
  const r = await k.post(`/api/jobs/${job}/run`, { params });
  return { id: r.body.run_id, status: r.status, body: r.body };
}

describe("POST /api/jobs/:name/run with params", () => {
  it("typed values reach the command (shell-quoted by context) and the env; defaults fill the rest", async () => {
    const r = await runWith("report", { day: "2026-11-01", ratio: 0.25, mode: "incremental" });
    expect(r.status).toBe(202);
    await k.waitRun(r.id, ["SUCCESS"]);
    expect(await logText(r.id)).toBe("day=2026-11-01 limit=10 dry=false mode=incremental env=2026-11-01|0.25|mode-incremental slot=[]");
    const run = (await k.get(`/api/runs/${r.id}`)).body;
    expect(run.params).toEqual({ day: "2026-11-01", limit: 10, ratio: 0.25, dry: false, mode: "incremental", token: "***" });
    expect(run.scheduled_at).toBeNull();
  });

  it("a value is data, never code, in every quoting context and in argv", async () => {
    const evil = "$(touch pwned1); `touch pwned2` ' \" * $HOME";
    const r = await runWith("argv", { text: evil });
    await k.waitRun(r.id, ["SUCCESS"]);
    expect(await logText(r.id)).toBe(`${evil}||`);
    const s = await runWith("shell", { text: evil });
    await k.waitRun(s.id, ["SUCCESS"]);
    expect(await logText(s.id)).toBe(`${evil}|<${evil}>|<${evil}>|`);
    expect(existsSync(join(k.dir, "pwned1"))).toBe(false);
    expect(existsSync(join(k.dir, "pwned2"))).toBe(false);
  });

  it.each([
    ["unknown name", { day: "2026-11-01", colour: "red" }, "params.colour", /unknown param "colour": this job declares day, limit/],
    ["wrong type: integer as a string", { day: "2026-11-01", limit: "10" }, "params.limit", /must be an integer \(got "10"\)/],
    ["wrong type: integer with a fraction", { day: "2026-11-01", limit: 1.5 }, "params.limit", /must be an integer/],
    ["wrong type: number", { day: "2026-11-01", ratio: "half" }, "params.ratio", /must be a number/],
    ["wrong type: boolean", { day: "2026-11-01", dry: "yes" }, "params.dry", /must be true or false/],
    ["wrong type: string", { day: 20261101 }, "params.day", /must be a string/],
    ["outside values", { day: "2026-11-01", mode: "partial" }, "params.mode", /must be one of full, incremental/],
    ["outside pattern", { day: "1 Nov" }, "params.day", /must match the pattern/],
    ["missing required", {}, "params.day", /is required/],
    ["not an object", ["2026-11-01"], "params", /must be an object/],
  ])("%s: 422 validation_failed at its path, no run", async (_what, params, path, message) => {
    const before = k.store.runs.recent("report", 1000).length;
    const r = await runWith("report", params);
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("validation_failed");
    const details = r.body.error.details as { path: string; message: string }[];
    expect(details.map((d) => d.path)).toEqual([path]);
    expect(details[0]!.message).toMatch(message);
    expect(r.body.error.message).toContain(path);
    expect(k.store.runs.recent("report", 1000).length).toBe(before);
  });

  it("reports every bad param at once", async () => {
    const r = await runWith("report", { day: "x", limit: "y", mode: "z" });
    expect(r.status).toBe(422);
    expect((r.body.error.details as { path: string }[]).map((d) => d.path).sort()).toEqual(["params.day", "params.limit", "params.mode"]);
  });

  it("a secret value never appears in an error, the run, the audit, the export or the logs of svc", async () => {
    const bad = await runWith("fails", { pin: "hunter2" });
    expect(bad.status).toBe(422);
    expect(bad.body.error.message).not.toContain("hunter2");
    expect(JSON.stringify(bad.body)).toContain("(got ***)");

    const r = await runWith("fails", { pin: 90210 });
    const failed = await k.waitRun(r.id, ["FAILED"]);
    expect(failed.params).toEqual({ pin: "***", note: "n" });
    expect(await logText(r.id)).toBe("got 90210"); // the job itself has the value
    for (const path of [`/api/runs/${r.id}`, "/api/audit?job=fails", "/api/db/job_runs?job=fails", "/api/jobs/fails"]) {
      expect((await k.get(path)).text, path).not.toContain("90210");
    }
    expect(JSON.stringify(k.store.exportAll())).not.toContain("90210");
    expect(JSON.stringify((k.log as unknown as { entries: unknown[] }).entries)).not.toContain("90210");
  });

  it("a retry keeps the params of the run it retries, secret ones included", async () => {
    const first = await runWith("fails", { pin: 4242, note: "first" });
    await k.waitRun(first.id, ["FAILED"]);
    const retry = await k.post("/api/jobs/fails/retry");
    expect(retry.status).toBe(202);
    const again = await k.waitRun(retry.body.run_id, ["FAILED"]);
    expect(again.params).toEqual({ pin: "***", note: "first" });
    expect(await logText(again.id)).toBe("got 4242");
  });

  it("running a tag checks every root's params first: a root that needs one fails the request, and no run starts", async () => {
    const r = await k.post("/api/jobs/run", { tag: "pair" });
    expect(r.status).toBe(422);
    expect(r.body.error.details).toEqual([{ path: "params.day", message: "is required (a string)" }]);
    for (const job of ["pair_plain", "pair_needs"]) expect((await k.get(`/api/jobs/${job}`)).body.runs, job).toEqual([]);
  });

  it("a retry of a run whose param has become secret since shows it as ***", async () => {
    const first = await runWith("fails", { pin: 5151, note: "was-plain" });
    await k.waitRun(first.id, ["FAILED"]);
    k.writeConfig(YAML.replace("note: {default: n}", "note: {default: n, secret: true}"));
    try {
      expect((await k.post("/api/daemon/reload")).status).toBe(200);
      const retry = await k.post("/api/jobs/fails/retry");
      const again = await k.waitRun(retry.body.run_id, ["FAILED"]);
      expect(again.params).toEqual({ pin: "***", note: "***" });
      expect((await k.get(`/api/runs/${again.id}`)).text).not.toContain("was-plain");
    } finally {
      k.writeConfig(YAML);
      expect((await k.post("/api/daemon/reload")).status).toBe(200);
    }
  });

  it("a run without a body takes the defaults (and a job without params has {})", async () => {
    const r = await k.post("/api/jobs/hourly/run");
    const done = await k.waitRun(r.body.run_id, ["SUCCESS"]);
    expect(done.params).toEqual({ level: 3 });
    expect(await logText(done.id)).toBe("hourly 3");
  });
});

describe("GET /api/audit?param=", () => {
  it("finds runs by a param value; a secret param is never matched", async () => {
    const a = await runWith("report", { day: "2030-01-02", limit: 77 });
    await k.waitRun(a.id, ["SUCCESS"]);
    const ids = async (q: string) => ((await k.get(`/api/audit?${q}`)).body.runs as { id: number }[]).map((r) => r.id);
    expect(await ids("param=day=2030-01-02")).toEqual([a.id]);
    expect(await ids("param=day=2030-01-02&param=limit=77")).toEqual([a.id]);
    expect(await ids("param=day=2030-01-02&param=limit=78")).toEqual([]);
    expect(await ids("param=token=default-secret")).toEqual([]);
    const bad = await k.get("/api/audit?param=Day");
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/param/);
  });

  it("trigger=backfill is a filter value", async () => {
    const r = await k.get("/api/audit?trigger=backfill");
    expect(r.status).toBe(200);
    expect(r.body.runs).toEqual([]);
  });
});
