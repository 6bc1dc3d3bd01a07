/**
 * The run-changes ring behind GET /api/timeline/changes, fed through the
 * engine's real event bus: what an answer holds (each run's latest state, in
 * the order of those changes), which cursors it serves as it forgets old
 * changes (checked against a plain model that keeps every change), and that
 * what it keeps stays bounded however many changes pass.
 */
import { describe, expect, it } from "vitest";
import { EventBus } from "../engine/events.js";
import { memoryLogger } from "../shared/logger.js";
import { toTimelineRun, type TimelineRun } from "../store/timeline.js";
import type { RunRecord, RunStatus } from "../store/types.js";
import { RunChanges } from "./runChanges.js";

const STATUSES: RunStatus[] = ["PENDING", "RUNNING", "RETRYING", "SUCCESS", "FAILED", "SKIPPED"];

function record(id: number, status: RunStatus, n: number): RunRecord {
  const at = new Date(Date.UTC(2026, 10, 25) + n * 1000).toISOString();
  return {
    id,
    job_name: `job-${id % 7}`,
    status,
    attempt: status === "RETRYING" ? 2 : 1,
    trigger: "schedule",
    triggered_by: "scheduler",
    reason: null,
    cycle_id: `c${id}`,
    tags: ["etl"],
    scheduled_for: null,
    created_at: at,
    started_at: status === "PENDING" ? null : at,
    finished_at: status === "SUCCESS" || status === "FAILED" || status === "SKIPPED" ? at : null,
    exit_code: status === "SUCCESS" ? 0 : status === "FAILED" ? 1 : null,
    sla_breached: 0,
    hc_status: null,
    pid: null,
    pid_start: null,
    error: null,
    duration_ms: null,
    next_attempt_at: null,
    params: { day: "2026-11-25" },
    scheduled_at: null,
    backfill_id: null,
  };
}

function ring(capacity?: number) {
  const bus = new EventBus(memoryLogger());
  const changes = new RunChanges(bus, "e1", capacity);
  let n = 0;
  const emit = (id: number, status: RunStatus): RunRecord => {
    const run = record(id, status, ++n);
    bus.emit("run:status", { run, from: null });
    return run;
  };
  return { bus, changes, emit };
}

const seqOf = (cursor: string) => Number(cursor.slice(cursor.lastIndexOf(".") + 1));

/** A small seeded generator (mulberry32): the same workload every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("RunChanges", () => {
  it("answers the latest state of each run that changed after the cursor, in the order of those latest changes", () => {
    const { changes, emit } = ring();
    const c0 = changes.cursor();
    expect(c0).toBe("e1.0");
    emit(1, "PENDING"); // seq 1
    emit(2, "PENDING"); // seq 2
    const c2 = changes.cursor();
    const r1 = emit(1, "RUNNING"); // seq 3
    const r3 = emit(3, "PENDING"); // seq 4
    const r2 = emit(2, "SUCCESS"); // seq 5

    const all = changes.since(c0);
    expect(all).toEqual({ cursor: "e1.5", reset: false, runs: [toTimelineRun(r1, null), toTimelineRun(r3, null), toTimelineRun(r2, null)] });
    expect(changes.since(c2).runs.map((r) => [r[0], r[2]])).toEqual([
      [1, "RUNNING"],
      [3, "PENDING"],
      [2, "SUCCESS"],
    ]);
    expect(changes.since("e1.4").runs.map((r) => r[0])).toEqual([2]);
    expect(changes.since("e1.5")).toEqual({ cursor: "e1.5", reset: false, runs: [] });
    // Three runs kept, one row each, whatever their earlier changes.
    expect(changes.size).toBe(3);
  });

  it("keeps the timeline row of a change, not the run record (no params, tags or pid)", () => {
    const { changes, emit } = ring();
    emit(9, "RUNNING");
    const [row] = changes.since("e1.0").runs;
    expect(row).toHaveLength(10);
    expect(JSON.stringify(row)).not.toContain("2026-11-25\"}"); // params
    expect(JSON.stringify(row)).not.toContain("etl");
  });

  it("answers reset to another epoch, a cursor ahead of it, and bad cursors", () => {
    const { changes, emit } = ring();
    emit(1, "PENDING");
    for (const cursor of ["e2.0", "e1.2", "e1", "nonsense", "e1.x", "e1.0.5", "e1.-1", "e1.0.5"]) {
      expect(changes.since(cursor)).toEqual({ cursor: "e1.1", reset: true, runs: [] });
    }
  });

  it("serves exactly the cursors a ring of every change would, while it forgets changes older than `capacity` (model check)", () => {
    const capacity = 40;
    const { changes, emit } = ring(capacity);
    const next = random(24);
    /** The model: every change, in order. */
    const log: RunRecord[] = [];
    const open: number[] = [];
    let nextId = 1;
    for (let n = 1; n <= 3_000; n++) {
      // Mostly a few runs in flight changing status; sometimes one run changes again and again.
      let id: number;
      if (open.length < 4 || next() < 0.2) open.push((id = nextId++));
      else id = open[Math.floor(next() * open.length)]!;
      const status = STATUSES[Math.floor(next() * STATUSES.length)]!;
      if (status === "SUCCESS" || status === "FAILED" || status === "SKIPPED") open.splice(open.indexOf(id), 1);
      log.push(emit(id, status));

      const seq = seqOf(changes.cursor());
      expect(seq).toBe(n);
      // Served: every cursor from some k changes back to now, capacity <= k <= 1.25 x capacity
      // (or all of them before the first changes are forgotten); older ones: reset.
      let oldest = n;
      for (let c = n; c >= 0; c--) {
        const answer = changes.since(`e1.${c}`);
        if (answer.reset) break;
        oldest = c;
        if (c % 5 !== 0 && c !== n - capacity) continue; // check the contents at some cursors
        const latest = new Map<number, { at: number; row: TimelineRun }>();
        for (let i = c; i < log.length; i++) latest.set(log[i]!.id, { at: i, row: toTimelineRun(log[i]!, null) });
        const expected = [...latest.values()].sort((a, b) => a.at - b.at).map((x) => x.row);
        expect(answer).toEqual({ cursor: `e1.${n}`, reset: false, runs: expected });
      }
      for (let c = oldest - 1; c >= Math.max(0, oldest - 3); c--) expect(changes.since(`e1.${c}`).reset).toBe(true);
      if (n <= capacity) expect(oldest).toBe(0);
      else {
        expect(n - oldest).toBeGreaterThanOrEqual(capacity);
        expect(n - oldest).toBeLessThanOrEqual(capacity * 1.25);
      }
    }
  });

  it("stays bounded: one row per run in the last 1.25 x capacity changes, and a run that changes 50,000 times keeps one", () => {
    const capacity = 1_000;
    const { changes, emit } = ring(capacity);
    const kept = () => (changes as unknown as { ring: unknown[] }).ring.length;
    // 3 changes a run, 8 in flight: ~1/3 of the window's changes are distinct runs.
    const flight: number[] = [];
    let id = 0;
    let most = 0;
    for (let n = 1; n <= 30_000; n++) {
      if (flight.length < 8) {
        flight.push(++id);
        emit(id, "PENDING");
      } else {
        const run = flight.shift()!;
        if (n % 2 === 0) {
          emit(run, "RUNNING");
          flight.push(run);
        } else emit(run, "SUCCESS");
      }
      most = Math.max(most, kept());
      expect(changes.size).toBeLessThanOrEqual(capacity * 1.25);
      expect(kept()).toBeLessThanOrEqual(2 * changes.size + 256);
    }
    expect(changes.size).toBeLessThan(capacity * 0.6);
    expect(most).toBeLessThan(2 * capacity * 0.6 + 256);

    // Superseded changes go long before the window's end (default capacity: 10,000 changes).
    const one = ring();
    let longest = 0;
    for (let n = 0; n < 50_000; n++) {
      one.emit(1, n % 2 === 0 ? "RUNNING" : "RETRYING");
      longest = Math.max(longest, (one.changes as unknown as { ring: unknown[] }).ring.length);
    }
    expect(one.changes.size).toBe(1);
    expect(longest).toBeLessThanOrEqual(258);
    const answer = one.changes.since(`e1.${50_000 - 10_000}`);
    expect(answer.runs.map((r) => [r[0], r[2]])).toEqual([[1, "RETRYING"]]);
  });

  it("stops listening when closed", () => {
    const { changes, emit } = ring();
    changes.close();
    emit(1, "PENDING");
    expect(changes.cursor()).toBe("e1.0");
    expect(changes.isClosed).toBe(true);
  });
});
