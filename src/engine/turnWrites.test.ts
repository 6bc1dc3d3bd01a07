import type Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { memoryLogger } from "../shared/logger.js";
import { tempStore } from "../../test/helpers/tempStore.js";
import { TurnWrites, type TurnPart } from "./turnWrites.js";

const store = tempStore();

/** A part that writes `job`'s lock_pid (or throws `error` after writing it), recording what it hears. */
function part(job: string, heard: string[], error?: Error): TurnPart<string> {
  return {
    write: () => {
      store.jobState.upsert(job, { lock_pid: 1 });
      if (error) throw error;
      return job;
    },
    committed: (r) => heard.push(`committed ${r}`),
    failed: (e) => heard.push(`failed ${job}: ${e.message}`),
  };
}

/** Counts outermost transactions (nested ones are savepoints). */
function countCommits(): { commits: number } {
  const counter = { commits: 0 };
  const tx = store.tx.bind(store);
  let depth = 0;
  store.tx = <T>(fn: () => T): T => {
    if (depth++ === 0) counter.commits++;
    try {
      return tx(fn);
    } finally {
      depth--;
    }
  };
  return counter;
}

const turn = () => new Promise((r) => setImmediate(r));

describe("TurnWrites: the engine's writes of one loop turn in one commit", () => {
  it("writes the parts added in one turn in one transaction at its check phase, and tells each in order after the commit", async () => {
    const writes = new TurnWrites(store, memoryLogger());
    const counter = countCommits();
    const heard: string[] = [];
    writes.add(() => part("a", heard));
    writes.add(() => part("b", heard));
    writes.add(() => part("c", heard));
    expect(store.jobState.get("a")).toBeNull(); // nothing before the check phase
    await turn();
    expect(counter.commits).toBe(1);
    expect(heard).toEqual(["committed a", "committed b", "committed c"]);
    for (const j of ["a", "b", "c"]) expect(store.jobState.get(j)?.lock_pid).toBe(1);
  });

  it("a part whose write throws is rolled back alone and hears its own error; the others are committed", async () => {
    const writes = new TurnWrites(store, memoryLogger());
    const heard: string[] = [];
    writes.add(() => part("a", heard));
    writes.add(() => part("bad", heard, new Error("constraint failed")));
    writes.add(() => part("c", heard));
    await turn();
    expect(heard).toEqual(["committed a", "failed bad: constraint failed", "committed c"]);
    expect(store.jobState.get("bad")).toBeNull(); // its savepoint was rolled back, write and all
    expect(store.jobState.get("a")?.lock_pid).toBe(1);
    expect(store.jobState.get("c")?.lock_pid).toBe(1);
  });

  it("a failed commit fails every part, and nothing of any is stored", async () => {
    const writes = new TurnWrites(store, memoryLogger());
    const tx = store.tx.bind(store);
    let depth = 0;
    // The outermost transaction fails as its COMMIT would.
    store.tx = <T>(fn: () => T): T =>
      tx(() => {
        depth++;
        try {
          const out = fn();
          if (depth === 1) throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
          return out;
        } finally {
          depth--;
        }
      });
    const heard: string[] = [];
    writes.add(() => part("a", heard));
    writes.add(() => part("b", heard));
    await turn();
    expect(heard).toEqual(["failed a: database or disk is full", "failed b: database or disk is full"]);
    expect(store.jobState.get("a")).toBeNull();
    expect(store.jobState.get("b")).toBeNull();
  });

  it("a part whose write SQLite answers by rolling the whole transaction back (disk full) fails the turn: no later part is written on its own", async () => {
    const db = (store as unknown as { db: Database.Database }).db;
    db.exec("CREATE TABLE IF NOT EXISTS filler (b BLOB)");
    const pages = db.pragma("page_count", { simple: true }) as number;
    // Room for a few small writes; not for 1 MB.
    db.pragma(`max_page_count = ${pages + 20}`);
    try {
      const writes = new TurnWrites(store, memoryLogger());
      const heard: string[] = [];
      writes.add(() => part("full-a", heard));
      writes.add(() => ({
        ...part("full-b", heard),
        write: () => {
          store.jobState.upsert("full-b", { lock_pid: 1 });
          db.prepare("INSERT INTO filler (b) VALUES (zeroblob(1000000))").run();
          return "full-b";
        },
      }));
      writes.add(() => part("full-c", heard));
      await turn();
      expect(heard).toEqual([
        "failed full-a: database or disk is full",
        "failed full-b: database or disk is full",
        "failed full-c: database or disk is full",
      ]);
      for (const j of ["full-a", "full-b", "full-c"]) expect(store.jobState.get(j)).toBeNull();
      expect(store.inTransaction).toBe(false);
    } finally {
      db.pragma("max_page_count = 4294967294");
    }
  });

  it("a part added while a turn's parts hear their outcome goes to the next turn's transaction", async () => {
    const writes = new TurnWrites(store, memoryLogger());
    const counter = countCommits();
    const heard: string[] = [];
    writes.add(() => ({ ...part("a", heard), committed: () => writes.add(() => part("later", heard)) }));
    await turn();
    expect(counter.commits).toBe(1);
    expect(store.jobState.get("later")).toBeNull();
    await turn();
    expect(counter.commits).toBe(2);
    expect(heard).toEqual(["committed later"]);
  });

  it("a part whose outcome handler throws does not keep the others from hearing theirs; the error is logged", async () => {
    const log = memoryLogger();
    const writes = new TurnWrites(store, log);
    const heard: string[] = [];
    writes.add(() => ({
      ...part("a", heard),
      committed: () => {
        throw new Error("listener broke");
      },
    }));
    writes.add(() => part("b", heard));
    await turn();
    expect(heard).toEqual(["committed b"]);
    expect(log.entries.some((e) => e.level === "error" && (e.fields.err as Error | undefined)?.message === "listener broke")).toBe(true);
  });
});
