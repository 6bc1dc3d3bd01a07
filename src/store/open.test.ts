import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { MIGRATIONS } from "./migrations/index.js";
import { StoreOpenError } from "./errors.js";
import { open, tempDir } from "./testkit.js";
import type { TempDir } from "./testkit.js";

const sha = (f: string) => crypto.createHash("sha256").update(fs.readFileSync(f)).digest("hex");
const mode = (f: string) => fs.statSync(f).mode & 0o777;

let tmp: TempDir;
afterEach(() => tmp?.remove());

function openError(file: string): StoreOpenError {
  try {
    open(file).close();
  } catch (e) {
    expect(e).toBeInstanceOf(StoreOpenError);
    return e as StoreOpenError;
  }
  throw new Error("open succeeded");
}

describe("opening the database", () => {
  it("creates the directory 0700 and the files 0600, in WAL mode", () => {
    tmp = tempDir();
    const file = path.join(tmp.dir, "data", "nested", "svc.db");
    const store = open(file);
    store.runs.create({ job_name: "a", trigger: "manual", triggered_by: "cli", cycle_id: "c", tags: [], created_at: "2026-01-01T00:00:00.000Z" });
    expect(mode(path.dirname(file))).toBe(0o700);
    for (const f of [file, `${file}-wal`, `${file}-shm`]) expect(mode(f)).toBe(0o600);
    const reader = new Database(file, { readonly: true });
    expect(reader.pragma("journal_mode", { simple: true })).toBe("wal");
    reader.close();
    store.close();
    store.close(); // safe twice
  });

  it("reopens its own database with the same data", () => {
    tmp = tempDir();
    const s1 = open(tmp.file());
    const run = s1.runs.create({ job_name: "a", trigger: "manual", triggered_by: "cli", cycle_id: "c", tags: ["x"], created_at: "2026-01-01T00:00:00.000Z" });
    s1.close();
    const s2 = open(tmp.file());
    expect(s2.runs.get(run.id)).toEqual(run);
    expect(s2.schemaVersion).toBe(MIGRATIONS.length);
    expect(s2.integrityCheck()).toBe("ok");
    s2.close();
  });

  it("refuses a file that is not SQLite, naming the path, and leaves it unchanged", () => {
    tmp = tempDir();
    const file = tmp.file();
    fs.writeFileSync(file, "this is my shopping list, not a database\n".repeat(200));
    const before = sha(file);
    const e = openError(file);
    expect(e.message).toBe(`${file} is not an svc database (file is not a database): move it away or set storage.sqlite.path`);
    expect(e.message).not.toContain("\n");
    expect(sha(file)).toBe(before);
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    expect(fs.existsSync(`${file}-shm`)).toBe(false);
  });

  it.each([
    ["a wrecked header", 16, "is not an svc database (file is not a database): move it away or set storage.sqlite.path"],
    [
      "a wrecked schema page",
      100,
      "is damaged (database disk image is malformed): restore it from a backup, or move it away or set storage.sqlite.path",
    ],
  ])("refuses a corrupt svc database (%s) and leaves it unchanged", (_what, from, message) => {
    tmp = tempDir();
    const file = tmp.file();
    const good = open(file);
    for (let i = 0; i < 50; i++) {
      good.runs.create({ job_name: `job-${i}`, trigger: "manual", triggered_by: "cli", cycle_id: `c${i}`, tags: [], created_at: "2026-01-01T00:00:00.000Z" });
    }
    good.close();
    const bytes = fs.readFileSync(file);
    bytes.fill(0xa5, from, 4_000); // the 16-byte magic stays
    fs.writeFileSync(file, bytes);
    const before = sha(file);
    expect(openError(file).message).toBe(`${file} ${message}`);
    expect(sha(file)).toBe(before);
  });

  it("refuses another application's SQLite database and leaves it unchanged", () => {
    tmp = tempDir();
    const file = tmp.file();
    const other = new Database(file);
    other.exec("CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('soup')");
    other.close();
    const before = sha(file);
    const e = openError(file);
    expect(e.message).toBe(`${file} is not an svc database (it is another application's SQLite database): move it away or set storage.sqlite.path`);
    expect(sha(file)).toBe(before);
  });

  it("refuses a database from a newer svc and leaves it unchanged", () => {
    tmp = tempDir();
    const file = tmp.file();
    open(file).close();
    const db = new Database(file);
    db.pragma("user_version = 99");
    db.close();
    const before = sha(file);
    const e = openError(file);
    expect(e.message).toBe(
      `${file} was written by a newer svc (schema version 99, this svc knows up to ${MIGRATIONS.length}): upgrade svc, or move it away or set storage.sqlite.path`,
    );
    expect(sha(file)).toBe(before);
  });

  it("refuses a directory at the database path", () => {
    tmp = tempDir();
    fs.mkdirSync(tmp.file());
    expect(openError(tmp.file()).message).toContain("is not an svc database (not a regular file)");
  });
});

/**
 * Root ignores directory permissions, so as root the open runs in a child
 * process that drops to nobody; otherwise in this process. The child loads
 * every module (tsx, the store, SQLite's addon) while still root and only then
 * calls setuid: the test passes wherever the checkout lives, even in a
 * directory nobody cannot enter (a clone in /root or in `mktemp -d`).
 */
describe("a read-only directory", () => {
  const root = process.getuid?.() === 0;
  const NOBODY = 65534;

  function openAs(file: string): string {
    if (!root) {
      try {
        open(file).close();
        return "opened";
      } catch (e) {
        return e instanceof StoreOpenError ? e.message : `unexpected: ${String(e)}`;
      }
    }
    const script = `
      import Database from "better-sqlite3";
      import { open } from ${JSON.stringify(path.resolve("src/store/testkit.ts"))};
      import { StoreOpenError } from ${JSON.stringify(path.resolve("src/store/errors.ts"))};
      new Database(":memory:").close(); // loads the native addon from the checkout while still root
      process.setgid(${NOBODY});
      process.setuid(${NOBODY});
      try { open(process.argv[1]).close(); console.log("opened"); }
      catch (e) { console.log(e instanceof StoreOpenError ? e.message : "unexpected: " + e); }`;
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, file], {
      encoding: "utf8",
      env: { ...process.env, HOME: "/tmp" },
    });
    return `${r.stdout}${r.stderr}`.trim();
  }

  function roDir(): string {
    tmp = tempDir();
    fs.chmodSync(tmp.dir, 0o755);
    const dir = path.join(tmp.dir, "ro");
    fs.mkdirSync(dir);
    return dir;
  }

  it("gives a clear error when the database cannot be created", () => {
    const dir = roDir();
    fs.chmodSync(dir, 0o555);
    const file = path.join(dir, "svc.db");
    expect(openAs(file)).toBe(
      `cannot create the database ${file}: the directory ${dir} is read-only: make it writable or set storage.sqlite.path`,
    );
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it("gives a clear error for an existing database and leaves it unchanged", () => {
    const dir = roDir();
    const file = path.join(dir, "svc.db");
    open(file).close();
    if (root) fs.chownSync(file, NOBODY, NOBODY);
    fs.chmodSync(dir, 0o555);
    const before = sha(file);
    expect(openAs(file)).toBe(
      `cannot open the database ${file}: the directory ${dir} is read-only (SQLite creates svc.db-wal and -shm beside it): make it writable or set storage.sqlite.path`,
    );
    expect(sha(file)).toBe(before);
    expect(fs.readdirSync(dir)).toEqual(["svc.db"]);
  });
});
