/**
 * The live heap the run-changes ring (src/api/runChanges.ts, behind `GET
 * /api/timeline/changes`) keeps, as the soak's daemon feeds it: runs of 1,000
 * jobs, 8 in flight, each created PENDING, started and ended (3 changes a
 * run, as in the soak's ~9 runs/s), written by the real store (SQLite in a
 * temporary directory), each returned RunRecord sent as `run:status` on the
 * engine's event bus as the engine does, with each start's marker log line.
 *
 *   node --expose-gc --import tsx bench/runChangesMemory.ts [--changes 100000] [--module <path to a runChanges.ts>]
 *
 * `--module` measures another version of the ring (an older runChanges.ts
 * copied out of git) with the same workload, for before/after rows. The
 * figure is heapUsed after full collections (global.gc, twice) with the ring
 * alive minus before it was made; the same workload without a ring first
 * gives the noise (statement caches, JIT). Not part of `npm run bench`: it
 * measures one class, not svcd.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { EventBus } from "../src/engine/events.js";
import { memoryLogger } from "../src/shared/logger.js";
import { openStore } from "../src/store/index.js";
import type { RunRecord } from "../src/store/types.js";

interface Ring {
  close(): void;
  /** Runs kept (the new ring only). */
  readonly size?: number;
}
type RingClass = new (bus: EventBus, epoch: string) => Ring;

const { values } = parseArgs({ options: { changes: { type: "string", default: "100000" }, module: { type: "string" } } });
const CHANGES = Number(values.changes);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with node --expose-gc --import tsx bench/runChangesMemory.ts");
const modulePath = resolve(values.module ?? join(import.meta.dirname, "..", "src", "api", "runChanges.ts"));
const { RunChanges } = (await import(pathToFileURL(modulePath).href)) as { RunChanges: RingClass };

const dir = mkdtempSync(join(tmpdir(), "svc-ringmem-"));
const store = openStore({ path: join(dir, "svc.db"), busyTimeoutMs: 5_000, walAutocheckpoint: 1_000 });
const bus = new EventBus(memoryLogger());

const JOBS = 1_000;
const IN_FLIGHT = 8;
let clock = Date.parse("2026-11-25T00:00:00.000Z");
let jobNo = 0;
const iso = () => new Date((clock += 37)).toISOString(); // ~27 changes/s
const send = (run: RunRecord, from: RunRecord["status"] | null) => bus.emit("run:status", { run, from });

/** `count` changes: 8 runs in flight, each created, later started, later ended (one in ten FAILED). */
const flight: RunRecord[] = [];
function feed(count: number): void {
  for (let sent = 0; sent < count; sent++) {
    if (flight.length < IN_FLIGHT) {
      const job = `job-${String(jobNo++ % JOBS).padStart(4, "0")}`;
      const run = store.runs.create({ job_name: job, trigger: "schedule", triggered_by: "scheduler", cycle_id: `c-${clock}-${job}`, tags: ["etl"], created_at: iso() });
      send(run, null);
      flight.push(run);
    } else if (flight[0]!.status === "PENDING") {
      const run = store.runs.transition(flight.shift()!.id, "RUNNING", { started_at: iso(), pid: 4242, pid_start: "123456" }, "PENDING");
      send(run, "PENDING");
      // Its marker line, as the dispatcher writes it (the log writer then forgets old runs as in svcd).
      store.logs.append(run.id, "stdout", "--- attempt 1 ---", run.started_at!);
      store.logs.flush();
      flight.push(run);
    } else {
      const old = flight.shift()!;
      const failed = old.id % 10 === 0;
      const run = store.runs.transition(old.id, failed ? "FAILED" : "SUCCESS", { finished_at: iso(), exit_code: failed ? 1 : 0, duration_ms: 1234, error: failed ? "exit code 1" : null }, "RUNNING");
      send(run, "RUNNING");
    }
  }
}

function heapMB(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed / 1e6;
}

const checkpoints = [5_000, 10_000, 12_500, 20_000, 30_000, 50_000, CHANGES].filter((n, i, a) => n <= CHANGES && a.indexOf(n) === i);

function measure(withRing: boolean): { at: number; mb: number; runs: number | undefined }[] {
  const base = heapMB();
  const ring = withRing ? new RunChanges(bus, "bench") : null;
  const out: { at: number; mb: number; runs: number | undefined }[] = [];
  let done = 0;
  for (const at of checkpoints) {
    feed(at - done);
    done = at;
    out.push({ at, mb: heapMB() - base, runs: ring?.size });
  }
  ring?.close();
  return out;
}

// Warm up: the statements, JIT and the bus's listener set, with a ring that is thrown away.
const warm = new RunChanges(bus, "warm");
feed(3_000);
warm.close();
const noise = measure(false);
const ring = measure(true);
store.close();
rmSync(dir, { recursive: true, force: true });

console.log(`ring: ${modulePath}`);
console.log(`changes  retained by the ring (MB)  without a ring (MB)  runs kept`);
for (let i = 0; i < checkpoints.length; i++) {
  const { at, mb, runs } = ring[i]!;
  console.log(`${String(at).padStart(7)}  ${mb.toFixed(2).padStart(26)}  ${noise[i]!.mb.toFixed(2).padStart(19)}  ${String(runs ?? "-").padStart(9)}`);
}
