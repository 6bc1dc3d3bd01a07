/**
 * The store's own test of a transient storage error (the engine retries such a write, the API
 * says what happened): real SQLite errors from a real database file, not invented codes alone.
 */
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { describeStorageError, isTransientStorageError } from "./errors.js";
import { tempDir, type TempDir } from "./testkit.js";

let tmp: TempDir | null = null;
afterEach(() => {
  tmp?.remove();
  tmp = null;
});

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected a throw");
}

describe("isTransientStorageError", () => {
  it("is true for a write refused because another connection holds the lock past busy_timeout", () => {
    tmp = tempDir();
    const a = new Database(tmp.file());
    a.exec("CREATE TABLE t (x INTEGER UNIQUE)");
    const b = new Database(tmp.file(), { timeout: 50 });
    a.exec("BEGIN IMMEDIATE");
    const e = thrown(() => b.exec("INSERT INTO t VALUES (1)"));
    a.exec("ROLLBACK");
    expect((e as { code: string }).code).toMatch(/^SQLITE_BUSY/);
    expect(isTransientStorageError(e)).toBe(true);
    expect(describeStorageError(e)).toBe("the database is locked by another process (storage.sqlite.busy_timeout passed): try again");
    a.close();
    b.close();
  });

  it("is false for a constraint violation, a misuse and a bug: trying again cannot help", () => {
    tmp = tempDir();
    const db = new Database(tmp.file());
    db.exec("CREATE TABLE t (x INTEGER UNIQUE); INSERT INTO t VALUES (1)");
    const unique = thrown(() => db.exec("INSERT INTO t VALUES (1)"));
    expect((unique as { code: string }).code).toBe("SQLITE_CONSTRAINT_UNIQUE");
    expect(isTransientStorageError(unique)).toBe(false);
    const syntax = thrown(() => db.exec("SELEC 1"));
    expect(isTransientStorageError(syntax)).toBe(false);
    db.close();
    expect(isTransientStorageError(new TypeError("x is undefined"))).toBe(false);
    expect(isTransientStorageError({ code: "ENOSPC" })).toBe(false);
    expect(isTransientStorageError(null)).toBe(false);
  });

  it.each([
    ["SQLITE_FULL", true, "the disk holding the database is full: free some space, then try again"],
    ["SQLITE_IOERR_WRITE", true, "the database could not be read or written (I/O error): the daemon logged the details"],
    ["SQLITE_READONLY_DBMOVED", true, "the database cannot be written (read-only): the daemon logged the details"],
    ["SQLITE_LOCKED_SHAREDCACHE", true, "the database is locked by another process (storage.sqlite.busy_timeout passed): try again"],
    ["SQLITE_CORRUPT", false, "the database refused the request: the daemon logged the details"],
    ["SQLITE_BUSYNESS", false, "the database refused the request: the daemon logged the details"],
  ])("%s: transient %s, described to users as %j", (code, transient, text) => {
    const e = Object.assign(new Error("sqlite says"), { code });
    expect(isTransientStorageError(e)).toBe(transient);
    expect(describeStorageError(e)).toBe(text);
  });

  it("describes nothing that is not from SQLite", () => {
    expect(describeStorageError(new Error("boom"))).toBeNull();
    expect(describeStorageError({ code: "EACCES" })).toBeNull();
  });
});
