import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EventBus } from "../engine/events.js";
import { memoryLogger } from "../shared/logger.js";
import type { RunRecord } from "../store/types.js";
import { openAuditLog } from "./audit.js";

const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "svc-audit-"));
  dirs.push(d);
  return d;
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const run = (id: number, over: Partial<RunRecord> = {}): RunRecord => ({
  id,
  job_name: "extract",
  status: "SUCCESS",
  attempt: 1,
  trigger: "schedule",
  triggered_by: "scheduler",
  reason: null,
  cycle_id: `c-${id}`,
  tags: [],
  scheduled_for: null,
  params: {},
  scheduled_at: null,
  backfill_id: null,
  created_at: "2026-11-22T00:00:00.000Z",
  started_at: null,
  finished_at: null,
  exit_code: 0,
  sla_breached: 0,
  hc_status: null,
  pid: 4242,
  pid_start: "1",
  error: null,
  duration_ms: 1234,
  next_attempt_at: null,
  ...over,
});

const cfg = (over: object = {}) => ({ enabled: true, path: null, maxSizeMb: 50, maxBackups: 5, ...over });
const at = () => new Date("2026-11-22T02:00:00.000Z");

describe("openAuditLog", () => {
  it("is off unless log.audit_log.enabled", () => {
    expect(openAuditLog(cfg({ enabled: false }), temp(), new EventBus(memoryLogger()))).toBeNull();
  });

  it("writes one JSON line per transition to <data>/audit.log, run metadata only, and nothing after close", async () => {
    const dir = temp();
    const bus = new EventBus(memoryLogger());
    const audit = openAuditLog(cfg(), dir, bus, at)!;
    bus.emit("run:status", { run: run(1, { status: "PENDING", exit_code: null, duration_ms: null, trigger: "manual", triggered_by: "alice", reason: "backfill" }), from: null });
    bus.emit("run:status", { run: run(1, { status: "FAILED", exit_code: 2, error: "exit code 2", trigger: "manual", triggered_by: "alice", reason: "backfill" }), from: "RUNNING" });
    await audit.close();
    bus.emit("run:status", { run: run(2), from: "RUNNING" });
    const lines = readFileSync(join(dir, "audit.log"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { ts: "2026-11-22T02:00:00.000Z", event: "run_status", job: "extract", run_id: 1, cycle_id: "c-1", attempt: 1, status: "PENDING", from: null, trigger: "manual", triggered_by: "alice", reason: "backfill", duration_ms: null, exit_code: null },
      { ts: "2026-11-22T02:00:00.000Z", event: "run_status", job: "extract", run_id: 1, cycle_id: "c-1", attempt: 1, status: "FAILED", from: "RUNNING", trigger: "manual", triggered_by: "alice", reason: "backfill", duration_ms: 1234, exit_code: 2 },
    ]);
    await audit.close(); // twice is fine
  });

  it("rotates by size and keeps max_backups uncompressed copies", async () => {
    const dir = temp();
    const bus = new EventBus(memoryLogger());
    // 0.01 MB rounds to a 10 KiB limit (the config loader only takes whole megabytes).
    const audit = openAuditLog(cfg({ path: join(dir, "trail", "audit.jsonl"), maxSizeMb: 0.01, maxBackups: 3 }), dir, bus, at)!;
    for (let i = 1; i <= 400; i++) {
      bus.emit("run:status", { run: run(i), from: "RUNNING" });
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 20)); // let rotations happen between bursts
    }
    await audit.close();
    const files = readdirSync(join(dir, "trail")).sort();
    expect(files).toEqual(["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2", "audit.jsonl.3"]);
    const ids: number[] = [];
    for (const f of ["audit.jsonl.3", "audit.jsonl.2", "audit.jsonl.1", "audit.jsonl"]) {
      const text = readFileSync(join(dir, "trail", f), "utf8");
      expect(text.length).toBeLessThan(12 * 1024);
      for (const line of text.trim().split("\n")) ids.push(JSON.parse(line).run_id);
    }
    // The newest lines survive, in order and without gaps.
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, k) => 400 - ids.length + 1 + k));
    expect(existsSync(join(dir, "audit.log"))).toBe(false);
  });
});
