import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "./migrations/index.js";
import { ConflictError, InvalidQueryError, NotFoundError } from "./errors.js";
import { tempStore } from "../../test/helpers/tempStore.js";
import { runTo } from "./testkit.js";

const TS = "2026-11-21T10:00:00.000Z";
const store = tempStore("file");

describe("run_outputs", () => {
  it("stores values per run and looks up the latest per cycle, never across cycles", () => {
    const a = runTo(store, "SUCCESS", { job_name: "extract", cycle_id: "c-1" });
    const b = runTo(store, "SUCCESS", { job_name: "extract", cycle_id: "c-2" });
    const row = store.outputs.put({ run_id: a.id, job_name: "extract", var_name: "rows", value: "10", cycle_id: "c-1", created_at: TS });
    expect(row).toMatchObject({ id: expect.any(Number), run_id: a.id, value: "10" });
    store.outputs.put({ run_id: a.id, job_name: "extract", var_name: "rows", value: "11", cycle_id: "c-1", created_at: TS });
    store.outputs.put({ run_id: b.id, job_name: "extract", var_name: "rows", value: "99", cycle_id: "c-2", created_at: TS });
    expect(store.outputs.lookup("c-1", "extract", "rows")).toBe("11");
    expect(store.outputs.lookup("c-2", "extract", "rows")).toBe("99");
    expect(store.outputs.lookup("c-3", "extract", "rows")).toBeNull();
    expect(store.outputs.lookup("c-1", "extract", "other")).toBeNull();
    expect(store.outputs.forRun(a.id).map((o) => o.value)).toEqual(["10", "11"]);
  });

  it("searches by run_id, job, cycle_id and var_name", () => {
    const r = runTo(store, "SUCCESS", { job_name: "load", cycle_id: "c-9" });
    store.outputs.put({ run_id: r.id, job_name: "load", var_name: "path", value: "/x", cycle_id: "c-9", created_at: TS });
    store.outputs.put({ run_id: r.id, job_name: "load", var_name: "size", value: "5", cycle_id: "c-9", created_at: TS });
    expect(store.outputs.search({ run_id: r.id }, 10, 0).total).toBe(2);
    expect(store.outputs.search({ job: "load", var_name: "size" }, 10, 0).rows.map((o) => o.value)).toEqual(["5"]);
    expect(store.outputs.search({ cycle_id: "c-9" }, 1, 1)).toMatchObject({ total: 2, limit: 1, offset: 1, rows: [{ var_name: "path" }] });
    expect(store.outputs.search({ job: "extract" }, 100, 0).total).toBe(3);
  });
});

describe("job_state", () => {
  it("creates on upsert and applies partial patches", () => {
    expect(store.jobState.get("js")).toBeNull();
    expect(store.jobState.upsert("js", {})).toEqual({ job_name: "js", last_success: null, last_failure: null, next_run: null, lock_pid: null, paused: 0 });
    store.jobState.upsert("js", { lock_pid: 1234, next_run: TS });
    expect(store.jobState.upsert("js", { last_success: TS })).toMatchObject({ lock_pid: 1234, next_run: TS, last_success: TS });
    expect(store.jobState.upsert("js", { lock_pid: null })).toMatchObject({ lock_pid: null, next_run: TS });
  });

  it("pauses and resumes many jobs, counting real changes", () => {
    store.jobState.upsert("p1", {});
    expect(store.jobState.setPaused(["p1", "p2", "p2"], true)).toBe(2); // p2 has no row yet: created paused
    expect(store.jobState.setPaused(["p1", "p2"], true)).toBe(0);
    expect(store.jobState.get("p2")?.paused).toBe(1);
    expect(store.jobState.setPaused(["p1", "p3"], false)).toBe(1); // p3 has no row: already active
    expect(store.jobState.get("p3")).toBeNull();
    expect(store.jobState.get("p1")?.paused).toBe(0);
  });

  it("pages and sorts, with id meaning job_name", () => {
    const all = store.jobState.all();
    expect(all.map((r) => r.job_name)).toEqual([...all.map((r) => r.job_name)].sort());
    const p = store.jobState.page({ page: 1, page_size: 25, sort: "id", order: "desc" });
    expect(p.total).toBe(all.length);
    expect(p.rows.map((r) => r.job_name)).toEqual(all.map((r) => r.job_name).reverse());
    const paused = store.jobState.page({ page: 1, page_size: 25, sort: "paused", order: "desc" });
    expect(paused.rows[0]?.paused).toBe(1);
    expect(store.jobState.page({ page: 9, page_size: 25, sort: "job_name", order: "asc" }).rows).toEqual([]);
    expect(() => store.jobState.page({ page: 1, page_size: 25, sort: "nope", order: "asc" })).toThrow(InvalidQueryError);
  });
});

describe("alerts", () => {
  it("records attempts, requeues only failed alerts, lists pending", () => {
    const run = runTo(store, "FAILED", { job_name: "al" });
    const a = store.alerts.create({ job_name: "al", run_id: run.id, event: "on_failure", channel: "chat:#ops", payload: '{"text":"x"}', created_at: TS });
    expect(a).toMatchObject({ status: "pending", attempts: 0, last_attempt_at: null, error: null });
    expect(store.alerts.pending().map((x) => x.id)).toContain(a.id);
    expect(() => store.alerts.requeue(a.id)).toThrow(ConflictError);
    store.alerts.recordAttempt(a.id, "pending", "HTTP 502", TS);
    const failed = store.alerts.recordAttempt(a.id, "failed", "HTTP 502", "2026-11-21T10:00:03.000Z");
    expect(failed).toMatchObject({ status: "failed", attempts: 2, error: "HTTP 502", last_attempt_at: "2026-11-21T10:00:03.000Z" });
    expect(store.alerts.requeue(a.id)).toMatchObject({ status: "pending", attempts: 2 });
    const ok = store.alerts.recordAttempt(a.id, "delivered", null, TS);
    expect(ok).toMatchObject({ status: "delivered", attempts: 3, error: null });
    expect(() => store.alerts.requeue(a.id)).toThrow("is delivered");
    expect(() => store.alerts.requeue(99_999)).toThrow(NotFoundError);
    expect(() => store.alerts.recordAttempt(99_999, "failed", "x", TS)).toThrow(NotFoundError);
    expect(() => store.alerts.recordAttempt(a.id, "lost" as never, null, TS)).toThrow(InvalidQueryError);
  });

  it("searches by job and status (any case), newest first", () => {
    for (let i = 0; i < 3; i++) store.alerts.create({ job_name: "al2", run_id: null, event: "on_success", channel: "webhook:http://x", payload: "{}", created_at: TS });
    const s = store.alerts.search({ job: "al2" }, 2, 0);
    expect(s).toMatchObject({ total: 3, limit: 2, offset: 0 });
    expect(s.rows[0]!.id).toBeGreaterThan(s.rows[1]!.id);
    expect(store.alerts.search({ job: "al2", status: "PENDING" as never }, 10, 0).total).toBe(3);
    expect(store.alerts.search({ status: "delivered" }, 10, 0).total).toBe(1);
  });
});

describe("integration status", () => {
  it("syncs with the config, keeps the last test, drops removed integrations", () => {
    store.integrations.sync([
      { name: "ops-chat", provider: "chat", credential_status: "configured" },
      { name: "smtp", provider: "smtp", credential_status: "missing required fields" },
    ]);
    store.integrations.recordTest("ops-chat", "200 ok", TS);
    store.integrations.sync([{ name: "ops-chat", provider: "chat", credential_status: "env var unset" }]);
    expect(store.integrations.all()).toEqual([
      { name: "ops-chat", provider: "chat", credential_status: "env var unset", last_test_result: "200 ok", last_test_at: TS },
    ]);
    expect(store.integrations.get("smtp")).toBeNull();
    expect(() => store.integrations.recordTest("smtp", "x", TS)).toThrow(NotFoundError);
  });
});

describe("export and integrity", () => {
  it("exports every table except log lines, which are counted", () => {
    const run = runTo(store, "RUNNING", { job_name: "exp", tags: ["t"] });
    store.logs.append(run.id, "stdout", "buffered until export", TS);
    const e = store.exportAll();
    expect(e.schema_version).toBe(MIGRATIONS.length);
    expect(Date.parse(e.exported_at)).not.toBeNaN();
    expect(e.job_runs.find((r) => r.id === run.id)).toEqual(store.runs.get(run.id));
    expect(e.job_runs.find((r) => r.id === run.id)?.tags).toEqual(["t"]);
    expect(e.job_state.length).toBe(store.jobState.all().length);
    expect(e.run_outputs.length).toBeGreaterThan(0);
    expect(e.alerts.length).toBeGreaterThan(0);
    expect(e.integrations).toHaveLength(1);
    expect(e.run_logs_count).toBe(1);
    expect(JSON.parse(JSON.stringify(e))).toEqual(e);
  });

  it("reports ok for a healthy database", () => {
    expect(store.integrityCheck()).toBe("ok");
  });
});
