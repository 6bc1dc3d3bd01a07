/**
 * engine.trigger (the API's manual run, issue 24's group commit): the runs asked for in one loop
 * turn are created, and started when they may, in one transaction; each caller's promise resolves
 * once that transaction is committed (an answer acknowledges a stored run). A run whose write fails
 * rejects alone; a failed commit rejects them all and leaves no run.
 */
import type Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { engineKits, type Kit } from "../helpers/engineKit.js";

const startKit = engineKits();

const YAML = `jobs:
  quick:
    command: "echo hi"
    concurrency: allow
  other:
    command: "echo other"
    concurrency: allow
`;

/** Counts the outermost transactions (nested ones are savepoints of the outer one). */
function countCommits(kit: Kit): { commits: number } {
  const counter = { commits: 0 };
  const tx = kit.store.tx.bind(kit.store);
  let depth = 0;
  kit.store.tx = <T>(fn: () => T): T => {
    if (depth === 0) counter.commits++;
    depth++;
    try {
      return tx(fn);
    } finally {
      depth--;
    }
  };
  return counter;
}

/** Makes every outermost transaction fail as its COMMIT would (everything in it rolled back) while `refuse` is set. */
function refuseCommits(kit: Kit): { refuse: boolean } {
  const state = { refuse: true };
  const tx = kit.store.tx.bind(kit.store);
  let depth = 0;
  kit.store.tx = <T>(fn: () => T): T =>
    tx(() => {
      depth++;
      try {
        const out = fn();
        if (state.refuse && depth === 1) throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
        return out;
      } finally {
        depth--;
      }
    });
  return state;
}

describe("engine.trigger: the triggers of one loop turn in one commit", () => {
  it("creates them together, in the order asked, each answered after the commit; all run", async () => {
    const kit = await startKit(YAML, { daemon: "executor:\n  pool_size: 2\n" });
    const counter = countCommits(kit);
    const asked = Array.from({ length: 6 }, () => kit.engine.trigger("quick", { triggeredBy: "api" }));
    expect(kit.runsOf("quick")).toEqual([]); // nothing is written before the turn's check phase
    const runs = await Promise.all(asked);
    expect(counter.commits).toBe(1);
    const ids = runs.map((r) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // Each was committed before its answer: the store has every one.
    for (const r of runs) expect(kit.store.runs.get(r.id)).not.toBeNull();
    // Two took the free pool slots at once; the rest wait in FIFO order.
    expect(runs.slice(2).map((r) => r.status)).toEqual(Array(4).fill("PENDING"));
    expect(kit.engine.counts()).toEqual({ running: 2, waiting: 4 });
    const ended = await Promise.all(ids.map((id) => kit.waitRun(id, ["SUCCESS", "FAILED"])));
    expect(ended.map((r) => r.status)).toEqual(Array(6).fill("SUCCESS"));
    const byStart = [...ended].sort((a, b) => a.started_at!.localeCompare(b.started_at!) || a.id - b.id);
    expect(byStart.map((r) => r.id)).toEqual(ids);
    for (const id of ids) expect(kit.lines(id)).toEqual(["--- attempt 1 ---", "hi"]);
  });

  it("a bad request throws at once and asks for nothing", async () => {
    const kit = await startKit(YAML);
    expect(() => kit.engine.trigger("nope", { triggeredBy: "api" })).toThrow(/nope/);
    expect(() => kit.engine.trigger("quick", { triggeredBy: "api", reason: "x".repeat(100_000) })).toThrow(/reason is 100000 characters/);
  });

  it("a run whose write fails rejects alone; the others of its turn are created", async () => {
    const kit = await startKit(YAML);
    const create = kit.store.runs.create.bind(kit.store.runs);
    kit.store.runs.create = (run) => {
      if (run.job_name === "other") throw Object.assign(new Error("constraint failed"), { code: "SQLITE_CONSTRAINT" });
      return create(run);
    };
    const a = kit.engine.trigger("quick", { triggeredBy: "api" });
    const b = kit.engine.trigger("other", { triggeredBy: "api" });
    const c = kit.engine.trigger("quick", { triggeredBy: "api" });
    await expect(b).rejects.toThrow(/constraint failed/);
    const [ra, rc] = await Promise.all([a, c]);
    expect(kit.runsOf("other")).toEqual([]);
    expect((await kit.waitRun(ra.id, ["SUCCESS", "FAILED"])).status).toBe("SUCCESS");
    expect((await kit.waitRun(rc.id, ["SUCCESS", "FAILED"])).status).toBe("SUCCESS");
  });

  it("a failed commit rejects every trigger of the turn and leaves no run; the engine carries on", async () => {
    const kit = await startKit(YAML);
    const commits = refuseCommits(kit);
    const asked = [kit.engine.trigger("quick", { triggeredBy: "api" }), kit.engine.trigger("other", { triggeredBy: "api" })];
    for (const p of asked) await expect(p).rejects.toThrow(/database or disk is full/);
    expect(kit.runsOf("quick")).toEqual([]);
    expect(kit.runsOf("other")).toEqual([]);
    expect(kit.transitions).toEqual([]);
    await kit.waitFor("a killed process to free its pool slot", () => kit.engine.counts().running === 0, 5_000);
    commits.refuse = false;
    const next = await kit.engine.trigger("quick", { triggeredBy: "api" });
    expect((await kit.waitRun(next.id, ["SUCCESS", "FAILED"])).status).toBe("SUCCESS");
  });

  it("a trigger whose write SQLite answers by rolling the turn's transaction back (disk full) fails every trigger of the turn; none is stored alone", async () => {
    const kit = await startKit(YAML);
    const db = (kit.store as unknown as { db: Database.Database }).db;
    db.exec("CREATE TABLE filler (b BLOB)");
    db.pragma(`max_page_count = ${(db.pragma("page_count", { simple: true }) as number) + 30}`);
    const create = kit.store.runs.create.bind(kit.store.runs);
    kit.store.runs.create = (run) => {
      const made = create(run);
      if (run.job_name === "other") db.prepare("INSERT INTO filler (b) VALUES (zeroblob(1000000))").run();
      return made;
    };
    const asked = [
      kit.engine.trigger("quick", { triggeredBy: "api" }),
      kit.engine.trigger("other", { triggeredBy: "api" }),
      kit.engine.trigger("quick", { triggeredBy: "api" }),
    ];
    for (const p of asked) await expect(p).rejects.toThrow(/database or disk is full/);
    expect(kit.runsOf("quick")).toEqual([]);
    expect(kit.runsOf("other")).toEqual([]);
    await kit.waitFor("the killed processes gone", () => kit.engine.counts().running === 0, 5_000);
    db.pragma("max_page_count = 4294967294");
    const next = await kit.engine.trigger("quick", { triggeredBy: "api" });
    expect((await kit.waitRun(next.id, ["SUCCESS", "FAILED"])).status).toBe("SUCCESS");
  });

  it("a start whose marker line the log writer refuses (its buffer full) strands no other start of its batch", async () => {
    const kit = await startKit(`jobs:\n  nap:\n    command: "sleep 0.3"\n    concurrency: allow\n`, { daemon: "executor:\n  pool_size: 4\n" });
    const append = kit.store.logs.append.bind(kit.store.logs);
    let refused = 0;
    kit.store.logs.append = (runId, stream, line, ts) => {
      if (line === "--- attempt 1 ---" && refused++ === 0) throw new Error("log buffer full (100 lines): writing to the database keeps failing");
      return append(runId, stream, line, ts);
    };
    const runs = await Promise.all([1, 2, 3, 4].map(() => kit.engine.trigger("nap", { triggeredBy: "api" })));
    for (const r of runs) expect((await kit.waitRun(r.id, ["SUCCESS", "FAILED"])).status).toBe("SUCCESS");
    await kit.waitFor("every pool slot free", () => kit.engine.counts().running === 0, 5_000);
    expect(refused).toBeGreaterThan(1);
    expect(kit.log.entries.filter((e) => e.level === "error").map((e) => e.msg)).toEqual(["could not log the start of a run: its lines so far are dropped"]);
  });

  it("a run triggered while the failed commit's killed process is still going gets an id of its own, and keeps its pool slot", async () => {
    const kit = await startKit(`jobs:\n  slow:\n    command: "sleep 2"\n    concurrency: allow\n`, { daemon: "executor:\n  pool_size: 2\n" });
    const commits = refuseCommits(kit);
    await expect(kit.engine.trigger("slow", { triggeredBy: "api" })).rejects.toThrow(/database or disk is full/);
    commits.refuse = false;
    // At once, before the killed process is gone: SQLite would give the rolled-back run's id again.
    const next = await kit.engine.trigger("slow", { triggeredBy: "api" });
    await kit.waitFor("the new run RUNNING", () => kit.store.runs.get(next.id)?.status === "RUNNING", 5_000);
    await kit.waitFor("the killed process gone", () => kit.engine.counts().running === 1, 5_000);
    await new Promise((r) => setTimeout(r, 200));
    // The killed process's end took nothing of the new run's: it still holds its slot and can be cancelled.
    expect(kit.engine.counts().running).toBe(1);
    expect(kit.runsOf("slow").map((r) => r.id)).toEqual([next.id]);
    kit.engine.cancel("slow");
    expect((await kit.waitRun(next.id, ["SUCCESS", "FAILED"])).status).toBe("FAILED");
  });
});
