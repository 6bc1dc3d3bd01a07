import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Store } from "./api.js";
import { tempStore } from "../../test/helpers/tempStore.js";
import { DuplicateSlotError, InvalidQueryError, NotFoundError, TransitionError } from "./errors.js";
import { newRun, open, runTo, tempDir, type TempDir } from "./testkit.js";
import type { RunRecord, RunStatus } from "./types.js";
import { MAX_OFFSET, MAX_PAGE, RUN_STATUSES } from "./types.js";

const store = tempStore("file");

describe("runs: create, transition, update", () => {
  it("creates a PENDING run with defaults and reads it back", () => {
    const run = store.runs.create(newRun({ job_name: "create-1", tags: ["etl", "nightly"], reason: "why not" }));
    expect(run).toMatchObject({
      job_name: "create-1",
      status: "PENDING",
      attempt: 1,
      trigger: "schedule",
      tags: ["etl", "nightly"],
      reason: "why not",
      sla_breached: 0,
      finished_at: null,
      hc_status: null,
    });
    expect(store.runs.get(run.id)).toEqual(run);
    expect(store.runs.get(999_999)).toBeNull();
  });

  it("never hands out an id again: a run created in a transaction that rolled back keeps its id to itself", () => {
    const before = store.runs.create(newRun({ job_name: "reuse-1" }));
    let lost = 0;
    expect(() =>
      store.tx(() => {
        lost = store.runs.create(newRun({ job_name: "reuse-1", tags: ["t"] })).id;
        throw new Error("disk full");
      }),
    ).toThrow("disk full");
    expect(lost).toBe(before.id + 1);
    expect(store.runs.get(lost)).toBeNull();
    // SQLite's counter was rolled back with the row and would give `lost` again.
    const next = store.runs.create(newRun({ job_name: "reuse-1", tags: ["u"] }));
    expect(next.id).toBe(lost + 1);
    expect(store.runs.get(next.id)).toEqual(next);
    expect(store.runs.page({ job: "reuse-1" }, { page: 1, page_size: 25, sort: "id", order: "desc" }).rows.map((r) => r.id)).toEqual([next.id, before.id]);
    expect(store.runs.page({ tag: "t" }, { page: 1, page_size: 25, sort: "id", order: "desc" }).total).toBe(0);
    // And the counter goes on from there, with no renumbering needed.
    expect(store.runs.create(newRun({ job_name: "reuse-1" })).id).toBe(lost + 2);
  });

  it("moves AUTOINCREMENT's counter past a renumbered id: the newest run deleted, a reopened store does not give its id again", () => {
    const t = tempDir();
    try {
      let s = open(t.file());
      s.runs.create(newRun({ job_name: "seq" }));
      expect(() =>
        s.tx(() => {
          s.runs.create(newRun({ job_name: "seq" }));
          throw new Error("rolled back");
        }),
      ).toThrow("rolled back");
      const renumbered = s.runs.create(newRun({ job_name: "seq", status: "SKIPPED" }));
      expect(renumbered.id).toBe(3);
      // Retention may delete the newest run; the counter alone remembers its id.
      expect(s.vacuum({ maxAgeMs: 0, maxRunsPerJob: null }, Date.parse(renumbered.created_at) + 1).runsByAge).toBe(1);
      s.close();
      s = open(t.file());
      expect(s.runs.create(newRun({ job_name: "seq" })).id).toBe(4);
      s.close();
    } finally {
      t.remove();
    }
  });

  it("a backfill's runs never take an id handed out before either", () => {
    const first = store.runs.create(newRun({ job_name: "reuse-bf" }));
    expect(() =>
      store.tx(() => {
        store.runs.create(newRun({ job_name: "reuse-bf" }));
        throw new Error("rolled back");
      }),
    ).toThrow("rolled back");
    const { runs } = store.backfills.create(
      { job_name: "reuse-bf", from: first.created_at, to: first.created_at, reason: null, params: {}, secretParams: [], rerun: false, ignore_exclude: false, parallel: 1, total: 2, created_by: "t", created_at: first.created_at },
      [
        { scheduled_at: "2026-11-01T00:00:00.000Z", cycle_id: "bf-1", scheduled_for: null },
        { scheduled_at: "2026-11-02T00:00:00.000Z", cycle_id: "bf-2", scheduled_for: null },
      ],
    );
    expect(runs.map((r) => r.id)).toEqual([first.id + 2, first.id + 3]);
    expect(store.runs.create(newRun({ job_name: "reuse-bf" })).id).toBe(first.id + 4);
  });

  it("stores params and shows secret ones as ***; paramValues gives them as stored", () => {
    const run = store.runs.create(
      newRun({ job_name: "params-1", params: { day: "2026-11-01", n: 3, dry: false, pin: "1234" }, secretParams: ["pin", "absent"], scheduled_at: "2026-11-01T00:00:00.000Z" }),
    );
    expect(run.params).toEqual({ day: "2026-11-01", n: 3, dry: false, pin: "***" });
    expect(run.scheduled_at).toBe("2026-11-01T00:00:00.000Z");
    expect(store.runs.get(run.id)!.params).toEqual(run.params);
    expect(store.runs.paramValues(run.id)).toEqual({ values: { day: "2026-11-01", n: 3, dry: false, pin: "1234" }, secret: ["pin"] });
    expect(JSON.stringify(store.exportAll().job_runs.find((r) => r.id === run.id))).not.toContain("1234");
    const plain = store.runs.create(newRun({ job_name: "params-2", params: {} }));
    expect(plain.params).toEqual({});
    expect(store.runs.paramValues(plain.id)).toBeNull();
    expect(() => store.runs.paramValues(999_999)).toThrow(NotFoundError);
  });

  it("audit filters by a param value, by its text; never by a secret one", () => {
    const mk = (params: Record<string, string | number | boolean>, secretParams: string[] = []) =>
      store.runs.create(newRun({ job_name: "params-audit", params, secretParams })).id;
    const a = mk({ day: "2026-11-01", n: 5, dry: true });
    const b = mk({ day: "2026-11-02", n: 5.5, dry: false });
    const c = mk({ day: "5", pin: "1234" }, ["pin"]);
    const ids = (params: { name: string; value: string }[]) => store.runs.audit({ job: "params-audit", params }, 100, 0).rows.map((r) => r.id);
    expect(ids([{ name: "day", value: "2026-11-01" }])).toEqual([a]);
    expect(ids([{ name: "n", value: "5" }])).toEqual([a]);
    expect(ids([{ name: "n", value: "5.50" }])).toEqual([b]);
    expect(ids([{ name: "day", value: "5" }])).toEqual([c]);
    expect(ids([{ name: "dry", value: "false" }])).toEqual([b]);
    expect(ids([{ name: "dry", value: "true" }, { name: "n", value: "5" }])).toEqual([a]);
    expect(ids([{ name: "pin", value: "1234" }])).toEqual([]);
    expect(ids([{ name: "nope", value: "x" }])).toEqual([]);
    expect(() => ids([{ name: "x') OR 1 --", value: "x" }])).toThrow(InvalidQueryError);
  });

  it("creates a SKIPPED run that is finished at creation", () => {
    const run = store.runs.create(newRun({ job_name: "create-2", status: "SKIPPED", error: "concurrency forbid" }));
    expect(run).toMatchObject({ status: "SKIPPED", error: "concurrency forbid", finished_at: run.created_at });
  });

  it("gives increasing ids and stores the trigger lower case", () => {
    const a = store.runs.create(newRun({ trigger: "MANUAL" as never }));
    const b = store.runs.create(newRun());
    expect(b.id).toBeGreaterThan(a.id);
    expect(a.trigger).toBe("manual");
  });

  it("refuses a second run for the same job and scheduled slot", () => {
    const slot = "2026-11-02T02:30:00.000Z";
    store.runs.create(newRun({ job_name: "slot", scheduled_for: slot }));
    expect(() => store.runs.create(newRun({ job_name: "slot", scheduled_for: slot }))).toThrow(DuplicateSlotError);
    expect(() => store.runs.create(newRun({ job_name: "slot", scheduled_for: slot }))).toThrow(
      `job slot: a run for the slot ${slot} already exists`,
    );
    // other jobs, other slots and unscheduled runs are unaffected
    store.runs.create(newRun({ job_name: "slot-2", scheduled_for: slot }));
    store.runs.create(newRun({ job_name: "slot", scheduled_for: "2026-11-03T02:30:00.000Z" }));
    store.runs.create(newRun({ job_name: "slot" }));
    store.runs.create(newRun({ job_name: "slot" }));
  });

  it("rejects a reason over 500 characters", () => {
    expect(() => store.runs.create(newRun({ reason: "x".repeat(501) }))).toThrow(RangeError);
    expect(store.runs.create(newRun({ reason: "x".repeat(500) })).reason).toHaveLength(500);
  });

  it("moves a run through allowed transitions and applies the patch", () => {
    const run = store.runs.create(newRun({ job_name: "t-1" }));
    const running = store.runs.transition(run.id, "RUNNING", { started_at: "2026-11-01T10:00:01.000Z", pid: 42, pid_start: "123" }, "PENDING");
    expect(running).toMatchObject({ status: "RUNNING", pid: 42, pid_start: "123", started_at: "2026-11-01T10:00:01.000Z" });
    const failed = store.runs.transition(run.id, "FAILED", { exit_code: 3, error: "exit 3", duration_ms: 1_000 });
    const retrying = store.runs.transition(failed.id, "RETRYING", { attempt: 2, next_attempt_at: "2026-11-01T10:00:31.000Z" });
    expect(retrying).toMatchObject({ status: "RETRYING", attempt: 2, exit_code: 3 });
    const again = store.runs.transition(run.id, "RUNNING", {}, "RETRYING");
    const done = store.runs.transition(again.id, "SUCCESS", { exit_code: 0, hc_status: "pass", finished_at: "2026-11-01T10:01:00.000Z" });
    expect(done).toMatchObject({ status: "SUCCESS", exit_code: 0, hc_status: "pass", attempt: 2 });
    expect(store.runs.get(run.id)).toEqual(done);
  });

  it("refuses a transition the table does not allow, and changes nothing", () => {
    const run = runTo(store, "SUCCESS", { job_name: "t-2" });
    expect(() => store.runs.transition(run.id, "RUNNING", { pid: 1 })).toThrow(TransitionError);
    expect(() => store.runs.transition(run.id, "RUNNING")).toThrow(`run ${run.id}: transition SUCCESS -> RUNNING is not allowed`);
    const pending = store.runs.create(newRun());
    expect(() => store.runs.transition(pending.id, "SUCCESS")).toThrow(TransitionError);
    expect(store.runs.get(run.id)).toEqual(run);
  });

  it("refuses a transition whose `from` is not the stored status (someone moved it first)", () => {
    const run = runTo(store, "RUNNING");
    let err: unknown;
    try {
      store.runs.transition(run.id, "SKIPPED", { error: "skipped" }, "PENDING");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TransitionError);
    expect(err).toMatchObject({ runId: run.id, from: "RUNNING", to: "SKIPPED", expected: "PENDING" });
    expect((err as Error).message).toBe(`run ${run.id}: transition PENDING -> SKIPPED refused: the run is RUNNING, not PENDING`);
    // even when the move itself would be allowed from the stored status
    expect(() => store.runs.transition(run.id, "FAILED", {}, "RETRYING")).toThrow(TransitionError);
    expect(store.runs.get(run.id)?.status).toBe("RUNNING");
  });

  it("throws NotFoundError for an unknown run", () => {
    expect(() => store.runs.transition(987_654, "RUNNING")).toThrow(NotFoundError);
    expect(() => store.runs.update(987_654, { sla_breached: 1 })).toThrow(NotFoundError);
  });

  it("updates fields without a status change", () => {
    const run = runTo(store, "RUNNING");
    const updated = store.runs.update(run.id, { sla_breached: 1, pid: 7 });
    expect(updated).toMatchObject({ status: "RUNNING", sla_breached: 1, pid: 7 });
    expect(store.runs.update(run.id, {})).toEqual(updated);
  });

  it("each write sets the columns its patch names: patches of the same size but other columns, with and without a status", () => {
    const run = runTo(store, "RUNNING");
    expect(store.runs.update(run.id, { pid: 11 })).toMatchObject({ pid: 11, exit_code: null });
    expect(store.runs.update(run.id, { exit_code: 3 })).toMatchObject({ pid: 11, exit_code: 3 });
    expect(store.runs.update(run.id, { pid: 12, error: "e" })).toMatchObject({ pid: 12, exit_code: 3, error: "e" });
    expect(store.runs.update(run.id, { exit_code: 4, hc_status: "warn" })).toMatchObject({ pid: 12, exit_code: 4, error: "e", hc_status: "warn" });
    // The same columns with a status, and with the status it must be in: their own statements.
    const failed = store.runs.transition(run.id, "FAILED", { exit_code: 5, finished_at: "2026-11-28T00:00:00.000Z" }, "RUNNING");
    expect(failed).toMatchObject({ status: "FAILED", exit_code: 5, pid: 12, finished_at: "2026-11-28T00:00:00.000Z" });
    const other = runTo(store, "RUNNING");
    expect(store.runs.transition(other.id, "SUCCESS", { exit_code: 0, finished_at: "2026-11-28T00:00:01.000Z" })).toMatchObject({ status: "SUCCESS", exit_code: 0 });
    expect(store.runs.get(run.id)).toMatchObject({ status: "FAILED", exit_code: 5 });
  });

  it("keeps a transition and the caller's other writes in one transaction", () => {
    const run = runTo(store, "RUNNING", { job_name: "tx" });
    expect(() =>
      store.tx(() => {
        store.runs.transition(run.id, "SUCCESS", { exit_code: 0 });
        store.jobState.upsert("tx", { last_success: "2026-11-01T10:00:00.000Z" });
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(store.runs.get(run.id)?.status).toBe("RUNNING");
    expect(store.jobState.get("tx")).toBeNull();
  });
});

describe("runs: the engine's queries", () => {
  let ids: Record<string, RunRecord>;
  beforeAll(() => {
    ids = {
      s1: runTo(store, "SUCCESS", { job_name: "eng", cycle_id: "cyc-eng" }),
      f1: runTo(store, "FAILED", { job_name: "eng", cycle_id: "cyc-eng" }),
      p1: runTo(store, "PENDING", { job_name: "eng", cycle_id: "cyc-eng" }),
      r1: runTo(store, "RUNNING", { job_name: "eng-2" }),
      y1: runTo(store, "RETRYING", { job_name: "eng-2" }),
    };
  });

  it("recent: newest first, limited", () => {
    expect(store.runs.recent("eng", 2).map((r) => r.id)).toEqual([ids.p1!.id, ids.f1!.id]);
    expect(store.runs.recent("nobody", 5)).toEqual([]);
  });

  it("lastFinished: of the newest SUCCESS and FAILED run, the one that finished last; SKIPPED ones never ran", () => {
    expect(store.runs.lastFinished("eng")?.id).toBe(ids.f1!.id);
    expect(store.runs.lastFinished("eng-2")).toBeNull();
    // Behind a queue of waiting and running runs, and past newer SKIPPED ones (forbid refusals).
    let last = null as RunRecord | null;
    for (const status of ["SKIPPED", "SUCCESS", "FAILED", "SKIPPED"] as const) {
      const done = runTo(store, status, { job_name: "eng-3" });
      if (status !== "SKIPPED") last = done;
      for (let i = 0; i < 3; i++) runTo(store, i === 0 ? "RUNNING" : "PENDING", { job_name: "eng-3" });
      if (last === null) expect(store.runs.lastFinished("eng-3")).toBeNull();
      else expect(store.runs.lastFinished("eng-3")).toMatchObject({ id: last.id, status: last.status });
    }
    // An older run that finished after a newer one (overlapping runs): the one that finished last.
    const long = runTo(store, "SUCCESS", { job_name: "eng-5" }, { finished_at: "2026-11-01T12:00:00.000Z" });
    runTo(store, "FAILED", { job_name: "eng-5" }, { finished_at: "2026-11-01T11:00:00.000Z" });
    expect(store.runs.lastFinished("eng-5")).toMatchObject({ id: long.id, status: "SUCCESS" });
  });

  it("lastCompletedStatus: the newest SUCCESS or FAILED run's; SKIPPED ones never ran", () => {
    expect(store.runs.lastCompletedStatus("eng")).toBe("FAILED");
    expect(store.runs.lastCompletedStatus("eng-2")).toBeNull();
    runTo(store, "FAILED", { job_name: "eng-4" });
    runTo(store, "SKIPPED", { job_name: "eng-4" });
    runTo(store, "RUNNING", { job_name: "eng-4" });
    expect(store.runs.lastCompletedStatus("eng-4")).toBe("FAILED");
  });

  it("audit's reason search ignores case beyond ASCII (Störung, ÉCHEC)", () => {
    const a = runTo(store, "SUCCESS", { job_name: "fold", reason: "Störung im Netz" });
    const b = runTo(store, "SUCCESS", { job_name: "fold", reason: "échec du transfert" });
    const ids = (reason: string) => store.runs.audit({ job: "fold", reason }, 10, 0).rows.map((r) => r.id);
    expect(ids("STÖRUNG")).toEqual([a.id]);
    expect(ids("ÉCHEC")).toEqual([b.id]);
    expect(ids("%")).toEqual([]);
  });

  it("byStatus: oldest first, any case", () => {
    const active = store.runs.byStatus(["RUNNING", "retrying" as RunStatus]).filter((r) => r.job_name === "eng-2");
    expect(active.map((r) => r.id)).toEqual([ids.r1!.id, ids.y1!.id]);
    expect(store.runs.byStatus([])).toEqual([]);
    expect(() => store.runs.byStatus(["DONE" as RunStatus])).toThrow(InvalidQueryError);
  });

  it("inCycle: every run of the cycle, oldest first", () => {
    expect(store.runs.inCycle("cyc-eng").map((r) => r.id)).toEqual([ids.s1!.id, ids.f1!.id, ids.p1!.id]);
  });

  it("getMany: the existing runs of the ids, as get() reads them", () => {
    const wanted = [ids.y1!.id, ids.p1!.id, 987_654_321, ids.s1!.id];
    const got = store.runs.getMany(wanted);
    expect(got.map((r) => r.id).sort((a, b) => a - b)).toEqual([ids.s1!.id, ids.p1!.id, ids.y1!.id]);
    for (const r of got) expect(r).toEqual(store.runs.get(r.id));
    expect(store.runs.getMany([])).toEqual([]);
  });
});

describe("runs: page() and audit() over a known data set", () => {
  let q: Store;
  let qtmp: TempDir;
  const all: RunRecord[] = [];
  const JOBS = ["alpha", "beta", "gamma"];
  const STATUSES: RunStatus[] = ["SUCCESS", "FAILED", "SKIPPED", "PENDING", "RUNNING", "RETRYING"];

  beforeAll(() => {
    qtmp = tempDir();
    q = open(qtmp.file());
    q.tx(() => {
      for (let i = 0; i < 130; i++) {
        const created = new Date(Date.UTC(2026, 9, 1) + i * 3_600_000).toISOString();
        const status = STATUSES[i % STATUSES.length]!;
        const manual = i % 5 === 0;
        runTo(
          q,
          status,
          {
            job_name: JOBS[i % 3]!,
            trigger: manual ? "manual" : i % 7 === 0 ? "dependency" : "schedule",
            triggered_by: manual ? "cli" : "scheduler",
            reason: manual ? `Backfill for ticket ${i}` : null,
            cycle_id: `q-${Math.floor(i / 3)}`,
            tags: i % 2 === 0 ? ["etl", "even"] : ["etl"],
            created_at: created,
          },
          status === "SUCCESS" || status === "FAILED" ? { duration_ms: (i * 37) % 101, exit_code: status === "SUCCESS" ? 0 : 1, sla_breached: i % 4 === 0 ? 1 : 0 } : {},
        );
      }
    });
    all.push(...q.runs.audit({}, 10_000, 0).rows);
  });
  afterAll(() => {
    q.close();
    qtmp.remove();
  });

  const expectIds = (got: RunRecord[], want: RunRecord[]) => expect(got.map((r) => r.id)).toEqual(want.map((r) => r.id));
  const byIdDesc = (rows: RunRecord[]) => [...rows].sort((a, b) => b.id - a.id);
  const page = (filter: Parameters<Store["runs"]["page"]>[0], n = 1, size: 25 | 50 | 100 = 100) =>
    q.runs.page(filter, { page: n, page_size: size, sort: "id", order: "desc" });

  it.each<[string, Parameters<Store["runs"]["page"]>[0], (r: RunRecord) => boolean]>([
    ["job", { job: "beta" }, (r) => r.job_name === "beta"],
    ["jobs", { jobs: ["alpha", "gamma"] }, (r) => r.job_name !== "beta"],
    ["jobs (empty)", { jobs: [] }, () => false],
    ["status", { status: "FAILED" }, (r) => r.status === "FAILED"],
    ["status (lower case)", { status: "failed" as RunStatus }, (r) => r.status === "FAILED"],
    ["statuses", { statuses: ["PENDING", "RUNNING"] }, (r) => r.status === "PENDING" || r.status === "RUNNING"],
    ["trigger", { trigger: "dependency" }, (r) => r.trigger === "dependency"],
    ["trigger (upper case)", { trigger: "MANUAL" as never }, (r) => r.trigger === "manual"],
    ["since", { since: "2026-10-03T00:00:00.000Z" }, (r) => r.created_at >= "2026-10-03T00:00:00.000Z"],
    ["since (a date)", { since: "2026-10-03" }, (r) => r.created_at >= "2026-10-03T00:00:00.000Z"],
    ["until", { until: "2026-10-02T12:00:00.000Z" }, (r) => r.created_at < "2026-10-02T12:00:00.000Z"],
    ["sla_breached 1", { sla_breached: 1 }, (r) => r.sla_breached === 1],
    ["sla_breached 0", { sla_breached: 0 }, (r) => r.sla_breached === 0],
    ["reason (substring, any case)", { reason: "TICKET 1" }, (r) => (r.reason ?? "").toLowerCase().includes("ticket 1")],
    ["reason with LIKE wildcards taken literally", { reason: "%" }, () => false],
    ["tag", { tag: "even" }, (r) => r.tags.includes("even")],
    ["cycle_id", { cycle_id: "q-7" }, (r) => r.cycle_id === "q-7"],
    [
      "job + status + since + tag",
      { job: "alpha", status: "SUCCESS", since: "2026-10-02T00:00:00.000Z", tag: "even" },
      (r) => r.job_name === "alpha" && r.status === "SUCCESS" && r.created_at >= "2026-10-02T00:00:00.000Z" && r.tags.includes("even"),
    ],
  ])("filters by %s", (_name, filter, pred) => {
    const want = byIdDesc(all.filter(pred));
    const got = page(filter);
    expect(got.total).toBe(want.length);
    expectIds(got.rows, want.slice(0, 100));
    const audited = q.runs.audit(filter, 100, 0);
    expect(audited.total).toBe(want.length);
    expectIds(audited.rows, want.slice(0, 100));
  });

  it("rejects invalid filter values", () => {
    expect(() => page({ status: "bogus" as RunStatus })).toThrow(InvalidQueryError);
    expect(() => page({ trigger: "cron" as never })).toThrow(InvalidQueryError);
    expect(() => page({ since: "yesterday-ish" })).toThrow(InvalidQueryError);
    expect(() => page({ sla_breached: 2 as never })).toThrow(InvalidQueryError);
  });

  it.each([25, 50, 100] as const)("pages of %i cover every row exactly once, and a page past the end is empty", (size) => {
    const seen: number[] = [];
    const pages = Math.ceil(all.length / size);
    for (let n = 1; n <= pages; n++) {
      const p = q.runs.page({}, { page: n, page_size: size, sort: "id", order: "desc" });
      expect(p).toMatchObject({ total: all.length, page: n, page_size: size });
      expect(p.rows.length).toBe(n < pages ? size : all.length - size * (pages - 1));
      seen.push(...p.rows.map((r) => r.id));
    }
    expect(seen).toEqual(byIdDesc(all).map((r) => r.id));
    expect(q.runs.page({}, { page: pages + 1, page_size: size, sort: "id", order: "desc" })).toEqual({
      rows: [],
      total: all.length,
      page: pages + 1,
      page_size: size,
    });
  });

  it("rejects bad page requests", () => {
    const ok = { page: 1, page_size: 25 as const, sort: "id", order: "desc" as const };
    expect(() => q.runs.page({}, { ...ok, page: 0 })).toThrow(InvalidQueryError);
    expect(() => q.runs.page({}, { ...ok, page: 1.5 })).toThrow(InvalidQueryError);
    expect(() => q.runs.page({}, { ...ok, page_size: 7 as never })).toThrow("page_size must be one of 25, 50, 100, got 7");
    expect(() => q.runs.page({}, { ...ok, order: "up" as never })).toThrow(InvalidQueryError);
    expect(() => q.runs.page({}, { ...ok, sort: "bogus" })).toThrow(/^cannot sort by "bogus": sortable columns are id, job_name/);
    expect(() => q.runs.page({}, { ...ok, sort: "tags" })).toThrow(InvalidQueryError);
    expect(() => q.runs.page({}, { ...ok, sort: "id; DROP TABLE job_runs" })).toThrow(InvalidQueryError);
    expect(() => q.runs.page({}, { ...ok, sort: "constructor" })).toThrow(InvalidQueryError);
    expect(() => q.runs.audit({}, 0, 0)).toThrow(InvalidQueryError);
    expect(() => q.runs.audit({}, 10, -1)).toThrow(InvalidQueryError);
  });

  it("an offset or page past what SQLite binds as an integer is a clear InvalidQueryError, not a database error (fuzz seed 255785)", () => {
    const ok = { page: 1, page_size: 100 as const, sort: "id", order: "desc" as const };
    // 1.0687198466597328e+225 is an integer to JavaScript; bound as a REAL, SQLite answers "datatype mismatch".
    expect(() => q.backfills.list({}, 100, 1.0687198466597328e225)).toThrow(/^offset must be an integer from 0 to 9007199254740991, got 1\.0687198466597328e\+225$/);
    expect(() => q.backfills.list({ job: "a" }, 100, 2 ** 63)).toThrow(InvalidQueryError);
    expect(() => q.runs.audit({}, 10, MAX_OFFSET + 1)).toThrow(InvalidQueryError);
    expect(() => q.runs.page({}, { ...ok, page: MAX_PAGE + 1 })).toThrow(/^page must be an integer from 1 to \d+, got/);
    expect(() => q.runs.page({}, { ...ok, page: 1e300 })).toThrow(InvalidQueryError);
    // The largest accepted values reach SQLite and find nothing.
    expect(q.backfills.list({}, 100, MAX_OFFSET)).toMatchObject({ rows: [], offset: MAX_OFFSET });
    expect(q.runs.audit({}, 10, MAX_OFFSET).rows).toEqual([]);
    expect(q.runs.page({}, { ...ok, page: MAX_PAGE }).rows).toEqual([]);
  });

  const SORTABLE = [
    "id", "job_name", "status", "attempt", "trigger", "triggered_by", "reason", "cycle_id", "scheduled_for", "created_at",
    "started_at", "finished_at", "exit_code", "sla_breached", "hc_status", "pid", "error", "duration_ms", "next_attempt_at",
  ] as const;

  /** SQLite order: NULL first ascending, then numbers, then text (binary); ties by id in the same direction. */
  function sqlOrder(col: (typeof SORTABLE)[number], order: "asc" | "desc") {
    const sign = order === "asc" ? 1 : -1;
    return (a: RunRecord, b: RunRecord): number => {
      const x = a[col] as string | number | null;
      const y = b[col] as string | number | null;
      let c = 0;
      if (x === null || y === null) c = x === y ? 0 : x === null ? -1 : 1;
      else c = x < y ? -1 : x > y ? 1 : 0;
      return sign * (c !== 0 ? c : a.id - b.id);
    };
  }

  it.each(SORTABLE.flatMap((c) => [[c, "asc"], [c, "desc"]] as const))("sorts by %s %s", (col, order) => {
    const want = [...all].sort(sqlOrder(col, order));
    const got = [
      ...q.runs.page({}, { page: 1, page_size: 100, sort: col, order }).rows,
      ...q.runs.page({}, { page: 2, page_size: 100, sort: col, order }).rows,
    ];
    expectIds(got, want);
  });

  it("audit answers newest first with limit and offset", () => {
    const s = q.runs.audit({ job: "gamma" }, 5, 3);
    const want = byIdDesc(all.filter((r) => r.job_name === "gamma"));
    expect(s).toMatchObject({ total: want.length, limit: 5, offset: 3 });
    expectIds(s.rows, want.slice(3, 8));
    expect(q.runs.audit({ job: "gamma" }, 5, 1_000).rows).toEqual([]);
  });

  it("knows every status", () => {
    expect(new Set(all.map((r) => r.status))).toEqual(new Set(RUN_STATUSES));
  });
});
