import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "./api.js";
import { newRun, open, runTo, tempDir, waitFor } from "./testkit.js";
import type { TempDir } from "./testkit.js";
import type { LogLine, LogStream } from "./types.js";
import { LOG_STREAMS } from "./types.js";

const TS = "2026-11-21T10:00:00.000Z";
let tmp: TempDir | undefined;
afterEach(() => {
  tmp?.remove();
  tmp = undefined;
});

function spans(file: string): { run_id: number; first_seq: number; last_seq: number; first_id: number }[] {
  const db = new Database(file, { readonly: true });
  const rows = db.prepare("SELECT * FROM run_log_spans ORDER BY run_id, first_seq").all() as ReturnType<typeof spans>;
  db.close();
  return rows;
}

describe("run_log_spans", () => {
  it("keeps one growing span for a run that writes alone, and one span per run per flush when runs interleave", () => {
    tmp = tempDir();
    const store = open(tmp.file(), { logFlushLines: 100 });
    const a = runTo(store, "RUNNING").id;
    for (let i = 0; i < 1_000; i++) store.logs.append(a, "stdout", `a ${i}`, TS); // 10 flushes
    store.logs.flush();
    expect(spans(store.path)).toEqual([{ run_id: a, first_seq: 1, last_seq: 1_000, first_id: 1 }]);
    const b = runTo(store, "RUNNING").id;
    for (let i = 0; i < 200; i++) store.logs.append(i % 2 ? a : b, "stdout", `${i}`, TS); // 2 flushes
    store.logs.flush();
    // each flush writes b's 50 lines, then a's 50 (order of first appearance)
    expect(spans(store.path)).toEqual([
      { run_id: a, first_seq: 1, last_seq: 1_000, first_id: 1 },
      { run_id: a, first_seq: 1_001, last_seq: 1_050, first_id: 1_051 },
      { run_id: a, first_seq: 1_051, last_seq: 1_100, first_id: 1_151 },
      { run_id: b, first_seq: 1, last_seq: 50, first_id: 1_001 },
      { run_id: b, first_seq: 51, last_seq: 100, first_id: 1_101 },
    ]);
    expect(store.logs.forRun(a, { limit: 10_000, offset: 0 }).lines.map((l) => l.seq)).toEqual(Array.from({ length: 1_100 }, (_, i) => i + 1));
    store.close();
  });
});

type Action =
  | { kind: "append"; run: number; stream: LogStream; n: number }
  | { kind: "flush" }
  | { kind: "reopen" };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("append" as const), run: fc.integer({ min: 0, max: 2 }), stream: fc.constantFrom(...LOG_STREAMS), n: fc.integer({ min: 1, max: 12 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: "flush" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "reopen" as const }) },
);
const readArb = fc.record({
  run: fc.integer({ min: 0, max: 2 }),
  afterSeq: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }),
  limit: fc.integer({ min: 1, max: 40 }),
  offset: fc.integer({ min: 0, max: 60 }),
  streams: fc.option(fc.subarray([...LOG_STREAMS]), { nil: undefined }),
  tailN: fc.integer({ min: 0, max: 50 }),
});

describe("a new run's lines", () => {
  it("start at seq 1 without a lookup, and carry their own job after a rolled-back run (whose id is not given again)", () => {
    tmp = tempDir();
    const store = open(tmp.file());
    let gone = 0;
    expect(() =>
      store.tx(() => {
        gone = store.runs.create(newRun({ job_name: "gone" })).id;
        throw new Error("rolled back");
      }),
    ).toThrow("rolled back");
    const kept = store.runs.create(newRun({ job_name: "kept" }));
    expect(kept.id).toBe(gone + 1); // AUTOINCREMENT rolled back with the row, but runs.create does not give the id again
    store.logs.append(kept.id, "stdout", "hello", TS);
    store.logs.flush();
    expect(store.logs.forRun(kept.id, { limit: 10, offset: 0 }).lines.map((l) => [l.seq, l.line])).toEqual([[1, "hello"]]);
    // The line's own job_name column (full-text searches filter by it).
    expect(store.logs.search({ run_id: kept.id }, 10, 0).rows.map((l) => [l.job_name, l.line])).toEqual([["kept", "hello"]]);
    expect(spans(store.path)).toEqual([{ run_id: kept.id, first_seq: 1, last_seq: 1, first_id: 1 }]);
    store.close();
  });
});

describe("flushWithin: lines written in the caller's transaction", () => {
  it("are durable and announced only once that transaction committed; rolled back, they stay buffered in order", () => {
    tmp = tempDir();
    const store = open(tmp.file(), { logFlushMs: 60_000 });
    const run = runTo(store, "RUNNING");
    const announced: string[] = [];
    store.logs.onFlushed((lines) => announced.push(...lines.map((l) => l.line)));
    const read = () => store.logs.forRun(run.id, { limit: 100, offset: 0 }).lines.map((l) => [l.seq, l.line]);
    for (const l of ["a", "b"]) store.logs.append(run.id, "stdout", l, TS);
    // Rolled back: nothing durable, nothing announced, and the lines come back in front of one appended meanwhile.
    let written = null as ReturnType<typeof store.logs.flushWithin>;
    expect(() =>
      store.tx(() => {
        written = store.logs.flushWithin();
        store.logs.append(run.id, "stdout", "c", TS);
        throw new Error("rolled back");
      }),
    ).toThrow("rolled back");
    written!.rolledBack();
    expect(read()).toEqual([]);
    expect(announced).toEqual([]);
    // Committed with the caller's own write: durable together, announced at committed().
    store.tx(() => {
      written = store.logs.flushWithin();
      store.jobState.upsert(run.job_name, { last_success: TS });
    });
    expect(read()).toEqual([[1, "a"], [2, "b"], [3, "c"]]);
    expect(announced).toEqual([]);
    written!.committed();
    expect(announced).toEqual(["a", "b", "c"]);
    expect(store.logs.flushWithin()).toBeNull();
    expect(() => {
      store.logs.append(run.id, "stdout", "d", TS);
      store.logs.flushWithin();
    }).toThrow(/open transaction/);
    store.logs.flush();
    expect(read()).toEqual([[1, "a"], [2, "b"], [3, "c"], [4, "d"]]);
    store.close();
  });
});

describe("log reads agree with a plain model (property)", () => {
  it("forRun, tail, search by run and job, totals: across flushes and restarts", () => {
    fc.assert(
      fc.property(fc.array(actionArb, { minLength: 1, maxLength: 40 }), fc.array(readArb, { minLength: 1, maxLength: 8 }), (actions, reads) => {
        const dir = tempDir("svc-store-prop-");
        let store: Store = open(dir.file(), { logFlushLines: 7, logFlushMs: 60_000 });
        try {
          const runs = [0, 1, 2].map((i) => runTo(store, "RUNNING", { job_name: i < 2 ? "twins" : "solo" }).id);
          const model: LogLine[] = [];
          const seq = [0, 0, 0];
          for (const a of actions) {
            if (a.kind === "append") {
              for (let k = 0; k < a.n; k++) {
                const line = store.logs.append(runs[a.run]!, a.stream, `r${a.run} ${seq[a.run]! + 1}`, TS);
                expect(line.seq).toBe(++seq[a.run]!);
                model.push(line);
              }
            } else if (a.kind === "flush") store.logs.flush();
            else {
              store.close();
              store = open(dir.file(), { logFlushLines: 7, logFlushMs: 60_000 });
            }
          }
          store.logs.flush();
          for (const r of reads) {
            const runId = runs[r.run]!;
            const mine = model.filter((l) => l.run_id === runId);
            const after = r.afterSeq ?? 0;
            const filtered = mine.filter((l) => l.seq > after && (r.streams === undefined || r.streams.includes(l.stream)));
            const got = store.logs.forRun(runId, { limit: r.limit, offset: r.offset, ...(r.afterSeq !== undefined ? { afterSeq: r.afterSeq } : {}), ...(r.streams ? { streams: r.streams } : {}) });
            expect(got.total).toBe(filtered.length);
            expect(got.lines).toEqual(filtered.slice(r.offset, r.offset + r.limit));
            const tailStreams = r.streams ?? ["stdout", "stderr"];
            expect(store.logs.tail(runId, r.tailN, r.streams)).toEqual(
              r.tailN === 0 ? [] : mine.filter((l) => tailStreams.includes(l.stream)).slice(-r.tailN),
            );
            const byRun = store.logs.search({ run_id: runId }, r.limit, r.offset);
            expect(byRun.total).toBe(mine.length);
            expect(byRun.rows.map((x) => x.seq)).toEqual([...mine].reverse().slice(r.offset, r.offset + r.limit).map((l) => l.seq));
          }
          // Newest-first pages of a job (its runs' lines interleave in id order) against plain SQL.
          const oracle = new Database(store.path, { readonly: true });
          for (const r of reads) {
            const stream = r.streams?.[0];
            const want = oracle
              .prepare(`SELECT id, run_id, seq FROM run_logs WHERE job_name = 'twins'${stream ? " AND stream = ?" : ""} ORDER BY id DESC LIMIT ? OFFSET ?`)
              .all(...(stream ? [stream] : []), r.limit, r.offset);
            const got = store.logs.search({ job: "twins", ...(stream ? { stream } : {}) }, r.limit, r.offset).rows;
            expect(got.map((x) => ({ id: x.id, run_id: x.run_id, seq: x.seq }))).toEqual(want);
          }
          oracle.close();
          const twins = model.filter((l) => l.run_id !== runs[2]);
          expect(store.logs.search({ job: "twins" }, 10_000, 0).total).toBe(twins.length);
          expect(store.logs.search({ job: "twins", stream: "stderr" }, 10_000, 0).total).toBe(twins.filter((l) => l.stream === "stderr").length);
          expect(store.logs.search({}, 1, 0).total).toBe(model.length);
          for (const stream of LOG_STREAMS) {
            expect(store.logs.search({ stream }, 1, 0).total).toBe(model.filter((l) => l.stream === stream).length);
            expect(store.logs.search({ run_id: runs[0]!, stream }, 1_000, 0).rows.map((x) => x.seq)).toEqual(
              model.filter((l) => l.run_id === runs[0] && l.stream === stream).map((l) => l.seq).reverse(),
            );
          }
          const rows = store.logs.search({}, 10_000, 0).rows;
          expect(new Set(rows.map((x) => `${x.run_id}:${x.seq}`)).size).toBe(model.length); // (run_id, seq) unique
        } finally {
          store.close();
          dir.remove();
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe("retention of big runs", () => {
  it("deletes a run of 12,000 lines in bounded batches, trimming its span, with the line counter kept", async () => {
    tmp = tempDir();
    const store = open(tmp.file(), { ftsIntervalMs: 5 });
    const big = runTo(store, "SUCCESS", { created_at: "2026-01-01T00:00:00.000Z" }).id;
    const keep = runTo(store, "RUNNING").id;
    for (let i = 0; i < 12_000; i++) store.logs.append(big, "stdout", `big ${i}`, TS);
    store.logs.append(keep, "stdout", "keep me", TS);
    store.logs.flush();
    await waitFor(() => store.logs.ftsLag() === 0, 2_000);
    const result = await store.vacuumAsync({ maxAgeMs: 86_400_000, maxRunsPerJob: null }, Date.parse("2026-11-21T00:00:00.000Z"));
    expect(result).toEqual({ runsByAge: 1, runsByCap: 0, logLines: 12_000, outputs: 0, alerts: 0, nonRuns: 0 });
    expect(spans(store.path)).toEqual([{ run_id: keep, first_seq: 1, last_seq: 1, first_id: 12_001 }]);
    const db = new Database(store.path, { readonly: true });
    expect(db.prepare("SELECT * FROM run_log_counts").all()).toEqual([{ run_id: keep, stream: "stdout", lines: 1 }]);
    db.close();
    expect(store.logs.search({}, 10, 0).total).toBe(1);
    expect(store.logs.search({ q: "big" }, 10, 0).total).toBe(0);
    expect(store.logs.search({ q: "keep" }, 10, 0).total).toBe(1);
    expect(store.exportAll().run_logs_count).toBe(1);
    store.close();
  });
});
