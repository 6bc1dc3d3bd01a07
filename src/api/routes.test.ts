/**
 * Status, jobs, runs and observability routes over real HTTP against the
 * real engine, store and loader (src/api/testkit.ts). Every JSON answer is
 * also checked against the schema the OpenAPI document gives for it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKit, type ApiKit } from "./testkit.js";

const YAML = `
defaults:
  timezone: UTC
jobs:
  extract:
    description: pull rows
    command: |
      echo "extracting"
      echo '{"rows": 7}'
    frequency: daily
    time: "0230"
    tags: [etl]
    output:
      rows: "json_field:rows"
    env:
      API_TOKEN: super-secret-value
  transform:
    command: echo "transform got {{ outputs.extract.rows }}"
    frequency: after:extract
    tags: [etl]
  broken:
    command: echo "about to fail" >&2; exit 3
    tags: [flaky]
  gated:
    command: echo gated
    frequency: manual
    depends_on: [broken]
  slow:
    command: sleep 30
    tags: [slow]
  hourly-job:
    command: "true"
    frequency: hourly
`;

let k: ApiKit;
beforeAll(async () => {
  k = await apiKit(YAML);
});
afterAll(async () => {
  await k?.close();
});

describe("GET /api/status", () => {
  it("answers health, version, uptime and job counts", async () => {
    const r = await k.get("/api/status");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: "ok", version: "0.1.0-test", jobs: { total: 6, active: 6, paused: 0, running: 0 } });
    expect(r.body.uptime_s).toBeGreaterThanOrEqual(5);
    expect(Date.parse(r.body.started_at)).toBeLessThan(Date.now());
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
  });
});

describe("GET /api/jobs", () => {
  it("lists every job sorted by name with next_run, last_run and state", async () => {
    const r = await k.get("/api/jobs");
    expect(r.status).toBe(200);
    const names = r.body.jobs.map((j: { name: string }) => j.name);
    expect(names).toEqual(["broken", "extract", "gated", "hourly-job", "slow", "transform"]);
    const extract = r.body.jobs.find((j: { name: string }) => j.name === "extract");
    expect(extract).toMatchObject({ description: "pull rows", frequency: "daily", timezone: "UTC", tags: ["etl"], paused: false });
    expect(extract.next_run).toMatch(/T02:30:00\.000Z$/);
    expect(extract.state.job_name).toBe("extract");
    const transform = r.body.jobs.find((j: { name: string }) => j.name === "transform");
    expect(transform).toMatchObject({ frequency: "after:extract", next_run: null, last_run: null });
    expect(r.body.jobs.find((j: { name: string }) => j.name === "hourly-job").next_run).toMatch(/:00:00\.000Z$/);
  });

  it("is never stale after a run, a pause or a reload (the list is memoised)", async () => {
    const before = (await k.get("/api/jobs")).body.jobs.find((j: { name: string }) => j.name === "hourly-job");
    const id = await k.run("hourly-job");
    const during = (await k.get("/api/jobs")).body.jobs.find((j: { name: string }) => j.name === "hourly-job");
    expect(during.last_run.id).toBe(id);
    await k.waitRun(id, ["SUCCESS"]);
    const after = (await k.get("/api/jobs")).body.jobs.find((j: { name: string }) => j.name === "hourly-job");
    expect(after.last_run).toMatchObject({ id, status: "SUCCESS" });
    expect(after.state.last_success).not.toBeNull();
    expect(before.last_run?.id).not.toBe(id);
    await k.post("/api/jobs/hourly-job/pause");
    expect((await k.get("/api/jobs?tag=")).status).toBe(400);
    expect((await k.get("/api/jobs")).body.jobs.find((j: { name: string }) => j.name === "hourly-job").paused).toBe(true);
    await k.post("/api/jobs/hourly-job/resume");
    expect((await k.get("/api/jobs")).body.jobs.find((j: { name: string }) => j.name === "hourly-job").paused).toBe(false);
    expect((await k.get("/api/status")).body.jobs.paused).toBe(0);
  });

  it("filters by tag; an unused tag gives an empty list, a malformed one 400", async () => {
    expect((await k.get("/api/jobs?tag=etl")).body.jobs.map((j: { name: string }) => j.name)).toEqual(["extract", "transform"]);
    expect((await k.get("/api/jobs?tag=nothing")).body.jobs).toEqual([]);
    const bad = await k.get("/api/jobs?tag=Not%20A%20Tag");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "bad_request" });
    expect(bad.body.error.message).toContain('"tag"');
  });
});

describe("manual runs, outputs, logs", () => {
  let extractRun: number;

  it("POST /run answers 202 {run_id, cycle_id, status} and records reason and triggered_by", async () => {
    const r = await k.post("/api/jobs/extract/run", { reason: "backfill after outage" });
    expect(r.status).toBe(202);
    expect(Object.keys(r.body).sort()).toEqual(["cycle_id", "run_id", "status"]);
    expect(r.body.cycle_id).toMatch(/^[0-9a-f-]{36}$/);
    extractRun = r.body.run_id;
    const done = await k.waitRun(extractRun, ["SUCCESS"]);
    expect(done).toMatchObject({ trigger: "manual", triggered_by: "api", reason: "backfill after outage", cycle_id: r.body.cycle_id });
  });

  it("GET /api/runs/:id answers the run record; unknown 404; malformed 400", async () => {
    const r = await k.get(`/api/runs/${extractRun}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: extractRun, job_name: "extract", status: "SUCCESS", exit_code: 0, sla_breached: 0, hc_status: null });
    expect(typeof r.body.duration_ms).toBe("number");
    expect((await k.get("/api/runs/999999")).status).toBe(404);
    for (const bad of ["abc", "0", "-1", "1.5"]) {
      const b = await k.get(`/api/runs/${bad}`);
      expect(b.status, bad).toBe(400);
      expect(b.body.error.message).toContain('"id"');
    }
  });

  it("GET /api/runs/:id/outputs lists the captured variables", async () => {
    const r = await k.get(`/api/runs/${extractRun}/outputs`);
    expect(r.status).toBe(200);
    expect(r.body.outputs).toEqual([expect.objectContaining({ var_name: "rows", value: "7", job_name: "extract" })]);
    expect((await k.get("/api/runs/999999/outputs")).status).toBe(404);
  });

  it("the dependency-triggered downstream run shares the cycle and got the output", async () => {
    const cycle = (await k.get(`/api/runs/${extractRun}`)).body.cycle_id;
    const runs = await k.waitFor("transform to finish", () => {
      const r = k.store.runs.recent("transform", 1)[0];
      return r && r.status === "SUCCESS" ? r : null;
    });
    expect(runs).toMatchObject({ trigger: "dependency", triggered_by: "extract", cycle_id: cycle });
    const logs = await k.get(`/api/runs/${runs.id}/logs`);
    expect(logs.body.lines.map((l: { line: string }) => l.line)).toContain("transform got 7");
  });

  it("GET /api/runs/:id/logs pages lines in seq order and filters streams case-insensitively", async () => {
    const all = await k.get(`/api/runs/${extractRun}/logs`);
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(3);
    expect(all.body.lines.map((l: { seq: number }) => l.seq)).toEqual([1, 2, 3]);
    expect(all.body.lines[0]).toEqual({ seq: 1, ts: expect.any(String), stream: "stdout", line: "--- attempt 1 ---" });
    const page = await k.get(`/api/runs/${extractRun}/logs?limit=1&offset=1`);
    expect(page.body).toMatchObject({ total: 3, lines: [{ seq: 2, line: "extracting" }] });
    expect((await k.get(`/api/runs/${extractRun}/logs?stream=STDERR`)).body).toEqual({ lines: [], total: 0 });
    expect((await k.get(`/api/runs/${extractRun}/logs?stream=bogus`)).status).toBe(400);
    expect((await k.get(`/api/runs/${extractRun}/logs?limit=10001`)).status).toBe(400);
    expect((await k.get(`/api/runs/${extractRun}/logs?limit=0`)).status).toBe(400);
  });

  it("rejects a reason over 500 characters, unknown body fields and unknown jobs", async () => {
    const long = await k.post("/api/jobs/extract/run", { reason: "x".repeat(501) });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toContain('"reason"');
    expect((await k.post("/api/jobs/extract/run", { reason: "ok", extra: 1 })).status).toBe(400);
    expect((await k.post("/api/jobs/extract/run", { reason: 42 })).status).toBe(400);
    const unknown = await k.post("/api/jobs/nope/run");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
  });
});

describe("GET /api/jobs/:name", () => {
  it("answers the effective config with env redacted, the state and the last N runs", async () => {
    const r = await k.get("/api/jobs/extract");
    expect(r.status).toBe(200);
    expect(r.body.job).toMatchObject({ name: "extract", frequency: "daily", time: "0230", env: { API_TOKEN: "***" } });
    expect(r.text).not.toContain("super-secret-value");
    expect(r.body.state).toMatchObject({ job_name: "extract", paused: false });
    expect(r.body.runs.length).toBeGreaterThanOrEqual(1);
    expect((await k.get("/api/jobs/extract?runs=0")).body.runs).toEqual([]);
    expect((await k.get("/api/jobs/extract?runs=500")).status).toBe(200);
    expect((await k.get("/api/jobs/extract?runs=501")).status).toBe(400);
    expect((await k.get("/api/jobs/extract?runs=two")).status).toBe(400);
  });

  it("answers 404 for an unknown job and 400 for a name that cannot be a job", async () => {
    expect((await k.get("/api/jobs/nope")).status).toBe(404);
    for (const bad of ["..%2F..%2Fetc%2Fpasswd", "..%2F", "-x", "a".repeat(65), "a%00b", "sp%20ace"]) {
      const r = await k.get(`/api/jobs/${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.error.message).toContain('"name"');
    }
  });
});

describe("retry, cancel, skip", () => {
  it("retry: 409 when the most recent run is not FAILED; 202 in the same cycle when it is", async () => {
    const notFailed = await k.post("/api/jobs/extract/retry");
    expect(notFailed.status).toBe(409);
    expect(notFailed.body.error.code).toBe("conflict");
    expect((await k.post("/api/jobs/slow/retry")).status).toBe(409); // no run at all

    const first = await k.run("broken");
    const failed = await k.waitRun(first, ["FAILED"]);
    const r = await k.post("/api/jobs/broken/retry");
    expect(r.status).toBe(202);
    expect(r.body.cycle_id).toBe(failed.cycle_id);
    const retried = await k.waitRun(r.body.run_id, ["FAILED"]);
    expect(retried).toMatchObject({ attempt: failed.attempt + 1, trigger: "manual", exit_code: 3 });
    expect((await k.post("/api/jobs/nope/retry")).status).toBe(404);
  });

  it("cancel: 409 with nothing running; stops every running run", async () => {
    expect((await k.post("/api/jobs/slow/cancel")).status).toBe(409);
    const id = await k.run("slow");
    await k.waitRun(id, ["RUNNING"]);
    expect((await k.get("/api/status")).body.jobs.running).toBe(1);
    const r = await k.post("/api/jobs/slow/cancel");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ job: "slow", cancelled: [id] });
    expect(await k.waitRun(id, ["FAILED"])).toMatchObject({ error: "cancelled" });
  });

  it("skip: 409 without a PENDING run; marks the oldest PENDING run SKIPPED", async () => {
    expect((await k.post("/api/jobs/extract/skip")).status).toBe(409);
    // gated waits for broken, whose most recent run FAILED: it stays PENDING.
    const id = await k.run("gated");
    await new Promise((r) => setTimeout(r, 300));
    expect(k.store.runs.get(id)!.status).toBe("PENDING");
    const r = await k.post("/api/jobs/gated/skip");
    expect(r.status).toBe(200);
    expect(r.body.run).toMatchObject({ id, status: "SKIPPED" });
    expect((await k.post("/api/jobs/nope/skip")).status).toBe(404);
  });
});

describe("pause and resume", () => {
  it("pauses and resumes one job; 404 for an unknown one", async () => {
    const p = await k.post("/api/jobs/extract/pause");
    expect(p.status).toBe(200);
    expect(p.body).toEqual({ job: "extract", paused: true });
    expect((await k.get("/api/jobs/extract")).body.state.paused).toBe(true);
    expect((await k.get("/api/status")).body.jobs).toMatchObject({ total: 6, paused: 1, active: 5 });
    expect((await k.post("/api/jobs/extract/resume")).body).toEqual({ job: "extract", paused: false });
    expect((await k.post("/api/jobs/nope/pause")).status).toBe(404);
    expect((await k.post("/api/jobs/nope/resume")).status).toBe(404);
  });

  it("pauses and resumes by tag (body or query); 404 for an unused tag, 400 without one", async () => {
    const p = await k.post("/api/jobs/pause", { tag: "etl" });
    expect(p.status).toBe(200);
    expect(p.body).toEqual({ tag: "etl", jobs: ["extract", "transform"], paused: true });
    const list = (await k.get("/api/jobs")).body.jobs;
    expect(list.filter((j: { paused: boolean }) => j.paused).map((j: { name: string }) => j.name)).toEqual(["extract", "transform"]);
    expect((await k.request("POST", "/api/jobs/resume?tag=etl")).body).toEqual({ tag: "etl", jobs: ["extract", "transform"], paused: false });
    expect((await k.post("/api/jobs/pause", { tag: "unused" })).status).toBe(404);
    const none = await k.post("/api/jobs/pause");
    expect(none.status).toBe(400);
    expect(none.body.error.message).toContain('"tag"');
    expect((await k.post("/api/jobs/pause", { tag: "BAD TAG" })).status).toBe(400);
  });
});

describe("observability", () => {
  it("GET /api/audit searches run history newest first with every filter", async () => {
    const all = await k.get("/api/audit");
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ limit: 100, offset: 0 });
    const ids = all.body.runs.map((r: { id: number }) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(all.body.total).toBe(ids.length);

    const failed = await k.get("/api/audit?status=failed");
    expect(failed.body.runs.length).toBeGreaterThan(0);
    expect(failed.body.runs.every((r: { status: string }) => r.status === "FAILED")).toBe(true);
    const manual = await k.get("/api/audit?trigger=MANUAL&job=extract");
    expect(manual.body.runs.every((r: { trigger: string; job_name: string }) => r.trigger === "manual" && r.job_name === "extract")).toBe(true);
    expect((await k.get("/api/audit?reason=OUTAGE")).body.runs.map((r: { job_name: string }) => r.job_name)).toEqual(["extract"]);
    expect((await k.get("/api/audit?tag=flaky")).body.runs.every((r: { job_name: string }) => r.job_name === "broken")).toBe(true);
    expect((await k.get("/api/audit?since=2999-01-01")).body).toMatchObject({ runs: [], total: 0 });
    expect((await k.get(`/api/audit?since=2000-01-01&until=2999-01-01&limit=1&offset=1`)).body).toMatchObject({ limit: 1, offset: 1, total: all.body.total });

    for (const bad of ["status=bogus", "trigger=cron", "since=yesterday", "limit=0", "limit=1001", "offset=-1", "job=..%2Fx"]) {
      const r = await k.get(`/api/audit?${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.error.code).toBe("bad_request");
    }
  });

  it("GET /api/tags counts jobs per tag", async () => {
    expect((await k.get("/api/tags")).body).toEqual({
      tags: [
        { tag: "etl", jobs: 2 },
        { tag: "flaky", jobs: 1 },
        { tag: "slow", jobs: 1 },
      ],
    });
  });

  it("GET /api/dag answers nodes, upstream->downstream edges and the topological order", async () => {
    const r = await k.get("/api/dag");
    expect(r.status).toBe(200);
    expect(r.body.nodes).toContainEqual({ name: "transform", frequency: "after:extract", tags: ["etl"] });
    expect(r.body.edges).toEqual(
      expect.arrayContaining([
        { from: "extract", to: "transform", kind: "after" },
        { from: "broken", to: "gated", kind: "depends_on" },
      ]),
    );
    expect(r.body.order.indexOf("extract")).toBeLessThan(r.body.order.indexOf("transform"));
    expect(r.body.order).toHaveLength(6);
  });
});
