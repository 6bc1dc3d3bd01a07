import fs from "node:fs";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { until as poll } from "../../test/helpers/until.js";
import { memoryLogger } from "../shared/logger.js";
import { Checkpointer } from "./checkpointer.js";
import { open, tempDir, type TempDir } from "./testkit.js";

let tmp: TempDir;
const closers: Array<() => void> = [];
const checkpointers: Checkpointer[] = [];
afterEach(() => {
  for (const ck of checkpointers) ck.close();
  for (const c of closers.splice(0).reverse()) c();
  // The -shm descriptors go last, after the connections (closing one drops the process's locks on the file).
  for (const ck of checkpointers.splice(0)) ck.release();
  tmp?.remove();
});

function track(ck: Checkpointer): Checkpointer {
  checkpointers.push(ck);
  return ck;
}

/** A WAL database with a table of 4 KB rows: each row written is about one WAL page. */
function walDb(): { db: Database.Database; file: string } {
  tmp = tempDir("svc-ckpt-");
  const file = tmp.file();
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("wal_autocheckpoint = 1000");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)");
  closers.push(() => db.close());
  return { db, file };
}

const insert = (db: Database.Database, rows: number) => {
  const st = db.prepare("INSERT INTO t (b) VALUES (randomblob(4000))");
  for (let i = 0; i < rows; i++) st.run(); // one commit each, as svcd's turns are
};

const until = (what: string, ok: () => boolean, ms = 15_000) => poll(what, ok, ms, 10);

describe("WAL checkpoints on a worker thread", { timeout: 40_000 }, () => {
  it("takes checkpoints away from the committing connection and runs them once the WAL passes the page limit", async () => {
    const { db, file } = walDb();
    const ck = track(new Checkpointer(db, file, { pages: 200, logger: memoryLogger() }));
    ck.start();
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    // 1,500 commits in one go, before any timer: SQLite's own checkpoint would have copied them at 1,000 pages; ours waits.
    insert(db, 1_500);
    expect(ck.walPages()?.pending).toBeGreaterThanOrEqual(1_500);
    await until("a checkpoint", () => ck.stats().checkpoints > 0 && (ck.walPages()?.pending ?? 1e9) < 200);
    expect(ck.stats()).toMatchObject({ running: true, inline: false });
    // The pages are in the database file: a connection reading the file alone (the WAL set aside) sees the rows.
    const copy = tmp.file("copy.db");
    fs.copyFileSync(file, copy);
    const reader = new Database(copy, { readonly: true });
    expect(reader.prepare("SELECT count(*) FROM t").pluck().get()).toBe(1_500);
    reader.close();
  });

  it("keeps the WAL bounded while commits never pause, and loses nothing", async () => {
    const { db, file } = walDb();
    const ck = track(new Checkpointer(db, file, { pages: 500, logger: memoryLogger() }));
    ck.start();
    // Commits in every turn of the event loop until 40,000 rows (at least a page each) are written: a passive
    // checkpoint never finds the WAL idle, so only svcd's connection copying the rest starts it over.
    let most = 0;
    let written = 0;
    const end = Date.now() + 30_000;
    while (written < 40_000 && Date.now() < end) {
      insert(db, 2);
      written += 2;
      most = Math.max(most, ck.walPages()?.frames ?? 0);
      await new Promise((r) => setImmediate(r));
    }
    expect(written).toBe(40_000);
    expect(ck.stats().checkpoints).toBeGreaterThan(2);
    expect(ck.stats().restarts).toBeGreaterThan(2);
    // Bounded, not cumulative: a WAL that never started over would hold every row written.
    expect(most).toBeLessThan(written / 2);
    expect(db.prepare("SELECT count(*) FROM t").pluck().get()).toBe(written);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
  });

  it("gives the disk back once a reader that held the WAL open is gone: the WAL file shrinks to its limit when it starts over", async () => {
    const { db, file } = walDb();
    const ck = track(new Checkpointer(db, file, { pages: 200, logger: memoryLogger() }));
    ck.start();
    const limit = db.pragma("journal_size_limit", { simple: true }) as number;
    // 200 pages of 4 KiB (+24 bytes of frame header each), within the WAL's usual length of RESTART_FACTOR times them.
    expect(limit).toBeGreaterThanOrEqual(4 * 200 * 4_120);
    expect(limit).toBeLessThan(3_000 * 4_096);
    // Another process's reader (here: another connection) keeps its snapshot while 3,000 pages are written:
    // no checkpoint may copy past it, so the WAL cannot start over and grows.
    const reader = new Database(file, { readonly: true });
    closers.push(() => reader.close());
    reader.exec("BEGIN");
    reader.prepare("SELECT count(*) FROM t").pluck().get();
    insert(db, 3_000);
    const grown = fs.statSync(`${file}-wal`).size;
    expect(grown).toBeGreaterThan(3_000 * 4_096);
    reader.exec("COMMIT");
    // Commits go on: the thread copies the WAL, svcd's connection copies the rest, the WAL starts over and
    // the first commit after that truncates the file to the limit.
    await until("the WAL file back within its limit", () => {
      insert(db, 2);
      return fs.statSync(`${file}-wal`).size <= limit;
    });
    expect(ck.stats().restarts).toBeGreaterThan(0);
    expect(db.prepare("SELECT count(*) FROM t").pluck().get()).toBeGreaterThan(3_000);
  });

  it("finds the WAL index beside the real file when the database path is a symbolic link", async () => {
    const { db } = walDb();
    const link = tmp.file("link.db");
    fs.symlinkSync(tmp.file(), link);
    const log = memoryLogger();
    const ck = track(new Checkpointer(db, link, { pages: 100, logger: log }));
    ck.start();
    insert(db, 300);
    await until("a checkpoint", () => ck.stats().checkpoints > 0);
    expect(ck.stats().inline).toBe(false);
    expect(log.entries).toEqual([]);
  });

  it("gives checkpoints back to the connection when the WAL index cannot be read", async () => {
    const { db } = walDb();
    const log = memoryLogger();
    const ck = track(new Checkpointer(db, tmp.file("elsewhere.db"), { pages: 100, logger: log }));
    ck.start();
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    await until("the fallback", () => ck.stats().inline);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(100);
    expect(String((log.entries[0]!.fields.err as Error).message)).toMatch(/cannot read the WAL index .*elsewhere\.db-shm/);
  });

  it("falls back at once, without waiting for it, when the thread dies", async () => {
    const { db, file } = walDb();
    const log = memoryLogger();
    const ck = track(new Checkpointer(db, file, { pages: 50, logger: log }));
    ck.start();
    insert(db, 100);
    await until("a checkpoint", () => ck.stats().checkpoints > 0);
    const t0 = Date.now();
    await (ck as unknown as { thread: { worker: { terminate(): Promise<number> } } }).thread.worker.terminate();
    await until("the fallback", () => ck.stats().inline);
    expect(Date.now() - t0).toBeLessThan(5_000); // a wait for a dead thread's answer would take 10 s
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(50);
    expect(log.entries.map((e) => e.msg)).toEqual(["WAL checkpoints are back on svcd's own connection: the checkpoint thread failed"]);
  });

  it("closes its connection before close() returns, so the daemon's close removes the WAL as before", async () => {
    tmp = tempDir("svc-ckpt-");
    const store = open(tmp.file(), { walAutocheckpoint: 50 });
    for (let i = 0; i < 300; i++) store.jobState.upsert(`job-${i}-${"x".repeat(2_000)}`, { paused: 0 });
    const ck = (store as unknown as { checkpointer: Checkpointer }).checkpointer;
    await until("a checkpoint", () => ck.stats().checkpoints > 0);
    expect(ck.stats().running).toBe(true);
    store.close();
    expect(fs.existsSync(`${tmp.file()}-wal`)).toBe(false);
    const again = open(tmp.file());
    expect(again.jobState.get("job-299-" + "x".repeat(2_000))).not.toBeNull();
    again.close();
  });

  it("stops the thread after a while without checkpoints, and starts it again when needed", async () => {
    const { db, file } = walDb();
    const ck = track(new Checkpointer(db, file, { pages: 50, logger: memoryLogger(), idleStopMs: 150 }));
    ck.start();
    insert(db, 100);
    await until("a checkpoint", () => ck.stats().checkpoints === 1);
    await until("the thread to stop", () => !ck.stats().running);
    insert(db, 100);
    await until("a second checkpoint", () => ck.stats().checkpoints === 2);
  });

  it("gives checkpoints back to the connection, with a warning, when the thread fails", async () => {
    const { db, file } = walDb();
    const log = memoryLogger();
    // The thread opens `file`, which is gone by then: it cannot checkpoint.
    const gone = tmp.file("gone.db");
    const ck = track(new Checkpointer(db, gone, { pages: 10, logger: log }));
    insert(db, 50);
    fs.copyFileSync(`${file}-shm`, `${gone}-shm`); // a WAL index showing 50 pages waiting
    ck.start();
    await until("the fallback", () => ck.stats().inline);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(10);
    expect(log.entries.filter((e) => e.level === "warn").map((e) => e.msg)).toEqual([
      "WAL checkpoints are back on svcd's own connection: the checkpoint thread failed",
    ]);
    expect(String((log.entries[0]!.fields.err as Error).message)).toMatch(/gone\.db|does not exist|unable to open/);
  });

  it("does nothing with wal_autocheckpoint 0: no checkpoints at all, as SQLite's own setting", async () => {
    const { db, file } = walDb();
    db.pragma("wal_autocheckpoint = 0");
    const ck = track(new Checkpointer(db, file, { pages: 0, logger: memoryLogger() }));
    ck.start();
    insert(db, 300);
    await new Promise((r) => setTimeout(r, 500));
    expect(ck.stats()).toMatchObject({ checkpoints: 0, running: false });
    expect(ck.walPages()?.pending).toBeGreaterThanOrEqual(300);
  });
});
