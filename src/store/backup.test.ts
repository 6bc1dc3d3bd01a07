import fs from "node:fs";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { restoreFrom } from "./backup.js";
import { open, runTo, tempDir, type TempDir } from "./testkit.js";

let tmp: TempDir;
afterEach(() => tmp?.remove());

const runsIn = (file: string): number => {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT count(*) FROM job_runs").pluck().get() as number;
  } finally {
    db.close();
  }
};

/** An svc database at `file` with `runs` runs, closed (no -wal left). */
function database(file: string, runs: number): void {
  const store = open(file);
  for (let i = 0; i < runs; i++) runTo(store, "SUCCESS");
  store.close();
}

describe("restoreFrom", () => {
  it("copies what the source still holds in its -wal file (a database kept after a crash), as its check counted", () => {
    tmp = tempDir("svc-restore-");
    const src = tmp.file("kept.db");
    database(src, 1);
    // Five more runs that only the -wal holds: copied aside while the connection is open, before any checkpoint.
    const store = open(src, { walAutocheckpoint: 0 });
    for (let i = 0; i < 5; i++) runTo(store, "SUCCESS");
    fs.copyFileSync(src, tmp.file("crashed.db"));
    fs.copyFileSync(`${src}-wal`, tmp.file("crashed.db-wal"));
    store.close();
    expect(fs.statSync(tmp.file("crashed.db-wal")).size).toBeGreaterThan(0);

    const r = restoreFrom(tmp.file("crashed.db"), tmp.file("svc.db"));
    expect(r.runs).toBe(6);
    expect(runsIn(tmp.file("svc.db"))).toBe(6);
    expect(fs.statSync(tmp.file("svc.db")).mode & 0o777).toBe(0o600);
  });

  it("two restores in the same second keep both previous databases, each with its own -wal", () => {
    tmp = tempDir("svc-restore-");
    const db = tmp.file("svc.db");
    const backup = tmp.file("backup.db");
    database(backup, 2);
    database(db, 7);
    // The database as a crash leaves it: its -wal holds runs the main file does not.
    const store = open(db, { walAutocheckpoint: 0 });
    runTo(store, "SUCCESS");
    fs.copyFileSync(db, tmp.file("x.db"));
    fs.copyFileSync(`${db}-wal`, tmp.file("x.db-wal"));
    store.close();
    fs.renameSync(tmp.file("x.db"), db);
    fs.renameSync(tmp.file("x.db-wal"), `${db}-wal`);

    const now = new Date("2026-11-29T01:01:08.123Z");
    const first = restoreFrom(backup, db, now);
    const second = restoreFrom(backup, db, now);
    expect(first.previous).toBe(`${db}.bak-20261129T010108Z`);
    expect(second.previous).toBe(`${db}.bak-20261129T010108Z-2`);
    // The crashed database, read with its -wal: all 8 runs; the second one is the first restore's copy.
    expect(runsIn(first.previous!)).toBe(8);
    expect(fs.existsSync(`${second.previous!}-wal`)).toBe(false);
    expect(runsIn(second.previous!)).toBe(2);
    expect(runsIn(db)).toBe(2);
  });
});
