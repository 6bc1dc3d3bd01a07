/**
 * GET /api/timeline and GET /api/timeline/changes over real HTTP against the
 * real engine running real subprocesses (src/api/testkit.ts); every answer
 * is also checked against its documented schema.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKit, type ApiKit, type Json } from "./testkit.js";

const YAML = `
defaults:
  timezone: UTC
jobs:
  extract-orders:
    command: echo extracting
    tags: [etl]
  load-orders:
    command: echo loading
    tags: [etl]
  report:
    command: echo report
  flaky:
    command: test -f attempted || { touch attempted; echo first try fails >&2; exit 3; }
    retries: 1
    retry_delay: fixed:1s
  sleepy:
    command: sleep 1
  retried:
    command: test -f retried-once || { touch retried-once; exit 3; }
    retries: 1
    retry_delay: fixed:1s
`;

let k: ApiKit;
beforeAll(async () => {
  k = await apiKit(YAML);
});
afterAll(async () => {
  await k?.close();
});

/** Run arrays as objects, by the answer's `columns`. */
const rows = (body: Json): Json[] => body.runs.map((r: unknown[]) => {
  expect(r).toHaveLength(body.columns.length);
  return Object.fromEntries(body.columns.map((c: string, i: number) => [c, r[i]]));
});

const window = (minutes = 10) => {
  const to = Date.now() + 60_000;
  return `from=${new Date(to - minutes * 60_000).toISOString()}&to=${new Date(to).toISOString()}`;
};

describe("GET /api/timeline", () => {
  it("lists the runs overlapping the window with the configured jobs, and filters by job, tag and name", async () => {
    const ids: Record<string, number> = {};
    for (const job of ["extract-orders", "load-orders", "report"]) ids[job] = await k.run(job);
    for (const id of Object.values(ids)) await k.waitRun(id, ["SUCCESS"]);

    const all = await k.get(`/api/timeline?${window()}`);
    expect(all.status).toBe(200);
    expect(all.body.jobs).toEqual(["extract-orders", "flaky", "load-orders", "report", "retried", "sleepy"]);
    expect(all.body.truncated).toBe(false);
    expect(all.body.cursor).toMatch(/\.\d+$/);
    expect(all.body.columns).toEqual(["id", "job_name", "status", "attempt", "trigger", "start", "end", "exit_code", "sla_breached", "attempts"]);
    const mine = rows(all.body).filter((r) => Object.values(ids).includes(r.id));
    expect(mine.map((r: Json) => r.job_name).sort()).toEqual(["extract-orders", "load-orders", "report"]);
    for (const r of mine) {
      const run = k.store.runs.get(r.id)!;
      expect(r).toMatchObject({ status: "SUCCESS", attempt: 1, attempts: null, exit_code: 0, trigger: "manual", sla_breached: 0 });
      expect([r.start, r.end]).toEqual([run.started_at, run.finished_at]);
    }

    const byTag = await k.get(`/api/timeline?${window()}&tag=etl`);
    expect(byTag.body.jobs).toEqual(["extract-orders", "load-orders"]);
    expect(rows(byTag.body).map((r) => r.job_name).sort()).toEqual(["extract-orders", "load-orders"]);
    const byName = await k.get(`/api/timeline?${window()}&q=ORDERS&tag=etl`);
    expect(byName.body.runs).toHaveLength(2);
    const oneJob = await k.get(`/api/timeline?${window()}&job=report`);
    expect(oneJob.body.jobs).toEqual(["report"]);
    expect(rows(oneJob.body).map((r) => r.id)).toEqual([ids.report]);

    // A window that ended before the runs: nothing.
    const before = await k.get(`/api/timeline?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z`);
    expect(before.body.runs).toEqual([]);
    expect(before.body.from).toBe("2026-01-01T00:00:00.000Z");

    const limited = await k.get(`/api/timeline?${window()}&limit=1`);
    expect(limited.body.truncated).toBe(true);
    expect(limited.body.runs).toHaveLength(1);
  });

  it("defaults to the last 24 hours, and refuses bad windows with the field named", async () => {
    const r = await k.get("/api/timeline");
    expect(Date.parse(r.body.to) - Date.parse(r.body.from)).toBe(24 * 3_600_000);
    expect(Math.abs(Date.parse(r.body.now) - Date.now())).toBeLessThan(5_000);

    const bad = await k.get("/api/timeline?from=yesterday");
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('"from"');
    // Strict ISO 8601: Date.parse read "1" as 2001, "March 7" as 2001-03-07 and a time without a zone in the daemon's zone.
    for (const from of ["1", "March%207", "2026-11-24T06:00", "2026-02-30"]) expect((await k.get(`/api/timeline?from=${from}&to=2026-11-25T00:00:00Z`)).status, from).toBe(400);
    const reversed = await k.get("/api/timeline?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z");
    expect(reversed.status).toBe(400);
    expect(reversed.body.error.message).toMatch(/must be before/);
    const wide = await k.get("/api/timeline?from=2026-01-01&to=2026-03-01");
    expect(wide.status).toBe(400);
    expect(wide.body.error.message).toMatch(/at most 31 days/);
    // A job no longer in svc.yaml still has history: no 404, no rows.
    const gone = await k.get("/api/timeline?job=nope");
    expect(gone.status).toBe(200);
    expect(gone.body).toMatchObject({ jobs: [], runs: [] });
    expect((await k.get("/api/timeline?limit=50001")).status).toBe(400);
    expect((await k.get("/api/timeline?tag=Not_A_Tag")).status).toBe(400);
  });

  it("gives a retried run its attempts: where each began and ended, with exit codes", async () => {
    const id = await k.run("flaky");
    const run = await k.waitRun(id, ["SUCCESS", "FAILED"], 20_000);
    expect(run.status).toBe("SUCCESS");
    const r = await k.get(`/api/timeline?${window()}&job=flaky`);
    const tl = rows(r.body).find((x) => x.id === id)!;
    expect(tl.attempt).toBe(2);
    expect(tl.attempts).toHaveLength(2);
    const [first, second] = tl.attempts;
    expect(first).toMatchObject({ attempt: 1, started_at: run.started_at, exit_code: 3 });
    expect(second).toMatchObject({ attempt: 2, finished_at: null });
    // attempt 2 began after attempt 1 ended and the 1 s delay
    expect(Date.parse(second.started_at) - Date.parse(first.finished_at)).toBeGreaterThanOrEqual(900);
    expect(Date.parse(second.started_at)).toBeLessThan(Date.parse(run.finished_at!));
    // Each attempt begins where its `--- attempt N ---` line was written (the same instant).
    const logs = await k.get(`/api/runs/${id}/logs`);
    const markers = logs.body.lines.filter((l: Json) => /^--- attempt \d+ ---$/.test(l.line)).map((l: Json) => l.ts);
    expect(markers).toEqual([first.started_at, second.started_at]);
  });
});

describe("GET /api/timeline/changes", () => {
  it("waits for a change and answers with it: a run created, started and finished", async () => {
    const start = await k.get(`/api/timeline?${window()}&job=sleepy`);
    let cursor: string = start.body.cursor;
    const held = k.get(`/api/timeline/changes?cursor=${cursor}&wait=20&job=sleepy`);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    const id = await k.run("sleepy");
    const first = await held;
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(first.body.reset).toBe(false);
    expect(rows(first.body).map((r) => r.id)).toEqual([id]);
    expect(first.body.cursor).not.toBe(cursor);
    cursor = first.body.cursor;

    // Follow it until it is over, as the dashboard does.
    const seen = new Set<string>([rows(first.body)[0]!.status]);
    const deadline = Date.now() + 15_000;
    while (!seen.has("SUCCESS") && Date.now() < deadline) {
      const next = await k.get(`/api/timeline/changes?cursor=${cursor}&wait=10&job=sleepy`);
      cursor = next.body.cursor;
      for (const r of rows(next.body)) {
        expect(r.id).toBe(id);
        seen.add(r.status);
      }
    }
    expect(seen).toContain("RUNNING");
    expect(seen).toContain("SUCCESS");
  });

  it("does not answer a filtered wait for another job's change; answers at once when asked not to wait", async () => {
    const { body } = await k.get(`/api/timeline?${window()}`);
    const t0 = Date.now();
    const held = k.get(`/api/timeline/changes?cursor=${body.cursor}&wait=2&job=report`);
    const other = await k.run("extract-orders");
    const answer = await held;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_800);
    expect(answer.body.runs).toEqual([]);
    await k.waitRun(other, ["SUCCESS"]);
    const now = await k.get(`/api/timeline/changes?cursor=${body.cursor}&wait=0`);
    expect(rows(now.body).map((r) => r.id)).toContain(other);
  });

  it("sends a run that changed several times once, in its latest state, a retried one with its attempts", async () => {
    const { body } = await k.get(`/api/timeline?${window()}&job=retried`);
    const id = await k.run("retried");
    const run = await k.waitRun(id, ["SUCCESS", "FAILED"], 20_000);
    expect(run.status).toBe("SUCCESS");
    // Created, started, retrying, started again, succeeded: one row, the last state.
    const answer = await k.get(`/api/timeline/changes?cursor=${body.cursor}&wait=0&job=retried`);
    const [row, ...more] = rows(answer.body);
    expect(more).toEqual([]);
    expect(row).toMatchObject({ id, status: "SUCCESS", attempt: 2, exit_code: 0, start: run.started_at, end: run.finished_at });
    expect(row.attempts).toHaveLength(2);
    expect(row.attempts[0]).toMatchObject({ attempt: 1, exit_code: 3 });
    expect(row.attempts).toEqual(rows((await k.get(`/api/timeline?${window()}&job=retried`)).body).find((r) => r.id === id)!.attempts);
    // Asked again (and unfiltered): the same row.
    const again = await k.get(`/api/timeline/changes?cursor=${body.cursor}&wait=0`);
    expect(rows(again.body).filter((r) => r.id === id)).toEqual([row]);
  });

  it("serves a cursor 10,000 changes old and answers reset once one is older than it keeps (12,500)", async () => {
    const kit = await apiKit("jobs:\n  a:\n    command: echo a\n");
    try {
      const id = await kit.run("a");
      const run = await kit.waitRun(id, ["SUCCESS"]);
      const first: string = (await kit.get("/api/timeline")).body.cursor;
      const epoch = first.slice(0, first.lastIndexOf("."));
      const seq = (c: string) => Number(c.slice(c.lastIndexOf(".") + 1));
      // The engine's event for a change of this run, 12,501 times (cheaper than 4,000 runs).
      for (let i = 0; i < 12_501; i++) kit.bus.emit("run:status", { run, from: "RUNNING" });
      const now: string = (await kit.get("/api/timeline")).body.cursor;
      expect(seq(now) - seq(first)).toBe(12_501);
      const old = await kit.get(`/api/timeline/changes?cursor=${first}&wait=0`);
      expect(old.body).toMatchObject({ reset: true, runs: [], cursor: now });
      const tenThousand = await kit.get(`/api/timeline/changes?cursor=${epoch}.${seq(now) - 10_000}&wait=0`);
      expect(tenThousand.body.reset).toBe(false);
      expect(rows(tenThousand.body)).toMatchObject([{ id, status: "SUCCESS" }]);
    } finally {
      await kit.close();
    }
  });

  it("answers reset to a cursor it cannot serve", async () => {
    for (const cursor of ["abc.1", "nonsense", `${(await k.get("/api/timeline")).body.cursor}9999`]) {
      const r = await k.get(`/api/timeline/changes?cursor=${encodeURIComponent(cursor)}&wait=5`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ reset: true, runs: [] });
    }
    expect((await k.get("/api/timeline/changes")).status).toBe(400);
    expect((await k.get("/api/timeline/changes?cursor=x&wait=61")).status).toBe(400);
  });
});

describe("shutdown", () => {
  it("answers a held wait at once when the server closes", async () => {
    const kit = await apiKit("jobs:\n  a:\n    command: echo a\n");
    const { body } = await kit.get("/api/timeline");
    const t0 = Date.now();
    const held = kit.get(`/api/timeline/changes?cursor=${body.cursor}&wait=30`);
    await new Promise((r) => setTimeout(r, 200));
    const closing = kit.close();
    const answer = await held;
    await closing;
    expect(answer.status).toBe(200);
    expect(answer.body.runs).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });
});
