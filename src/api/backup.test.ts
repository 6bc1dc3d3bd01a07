/**
 * POST /api/db/backup over real HTTP (src/api/testkit.ts): to a path, or
 * streamed back; bad paths are 400s that say where; admin only by default.
 */
import { existsSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { apiKit, type ApiKit } from "./testkit.js";

const yaml = 'jobs:\n  a:\n    command: "echo hello"\n';

describe("POST /api/db/backup", () => {
  let k: ApiKit;
  beforeAll(async () => {
    k = await apiKit(yaml);
    for (let i = 0; i < 3; i++) await k.waitRun(await k.run("a"), ["SUCCESS"]);
  });
  afterAll(async () => {
    await k?.close();
  });

  const runsIn = (file: string) => {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      return db.prepare("SELECT count(*) FROM job_runs").pluck().get();
    } finally {
      db.close();
    }
  };

  it("writes a checked copy to an absolute path and says what it wrote", async () => {
    const file = join(k.dir, "copy.db");
    writeFileSync(file, "an older file there is replaced");
    const res = await k.post<{ path: string; runs: number; integrity: string; bytes: number; schema_version: number }>("/api/db/backup", { path: file });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ path: file, runs: 3, integrity: "ok" });
    expect(res.body.schema_version).toBe(k.store.schemaVersion);
    expect(runsIn(file)).toBe(3);
  });

  it("streams the copy back without a body", async () => {
    const res = await fetch(`${k.base}/api/db/backup`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.sqlite3");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="svc-\d{8}T\d{6}Z\.db"$/);
    expect(res.headers.get("x-svc-runs")).toBe("3");
    const file = join(k.dir, "streamed.db");
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    expect(runsIn(file)).toBe(3);
    expect(readdirSync(join(k.dir, ".svc")).filter((f) => f.startsWith("backup-download"))).toEqual([]); // the temp copy is gone
  });

  it("streams concurrent copies without a body, each whole (found by the API fuzz: two in the same millisecond shared one temp file)", async () => {
    // Each request on its own connection, all written in one turn, as the fuzz sends them: the daemon reads them in one turn too.
    const post = () =>
      new Promise<{ status: number; bytes: Buffer }>((resolve, reject) => {
        const req = request(`${k.base}/api/db/backup`, { method: "POST", agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks) }));
          res.on("error", reject);
        });
        req.on("error", reject);
        req.end();
      });
    // The same millisecond for all of them, as on a busy daemon: Date.now() held still while they run.
    // (The fuzz's 500 needs one copy's removal to fall between another's rename and open, which this
    // does not force every time: it guards the concurrent path; the unique names are the fix.)
    const now = vi.spyOn(Date, "now").mockReturnValue(Date.now());
    let answers;
    try {
      answers = await Promise.all(Array.from({ length: 16 }, post));
    } finally {
      now.mockRestore();
    }
    expect(answers.map((a) => a.status)).toEqual(Array(16).fill(200));
    answers.forEach((a, i) => {
      const file = join(k.dir, `concurrent-${i}.db`);
      writeFileSync(file, a.bytes);
      expect(runsIn(file)).toBe(3);
    });
    expect(readdirSync(join(k.dir, ".svc")).filter((f) => f.startsWith("backup-download"))).toEqual([]);
  });

  it("answers 400 naming the path for a relative path, a missing directory and the live database", async () => {
    const rel = await k.post<{ error: { code: string; message: string } }>("/api/db/backup", { path: "copy.db" });
    expect(rel.status).toBe(400);
    expect(rel.body.error.message).toBe('path: "copy.db" must be an absolute path on the daemon\'s machine');
    const missing = join(k.dir, "no", "such", "dir", "copy.db");
    const gone = await k.post<{ error: { message: string } }>("/api/db/backup", { path: missing });
    expect(gone.status).toBe(400);
    expect(gone.body.error.message).toBe(`cannot write the backup to ${missing} (ENOENT): check that its directory exists and the daemon's user may write there`);
    expect(existsSync(join(k.dir, "no"))).toBe(false);
    const dirPath = await k.post<{ error: { message: string } }>("/api/db/backup", { path: k.dir });
    expect(dirPath.status).toBe(400);
    expect(dirPath.body.error.message).toMatch(/^cannot write the backup to .* \(EISDIR\): it is a directory: give the path of a file in it$/);
    const live = await k.post<{ error: { message: string } }>("/api/db/backup", { path: join(k.dir, ".svc", "svc.db") });
    expect(live.status).toBe(400);
    expect(live.body.error.message).toContain("is the live database");
    // The same file through a symbolic link to its directory: the copy's rename would replace it.
    const runs = runsIn(join(k.dir, ".svc", "svc.db"));
    const link = join(k.dir, "data-link");
    symlinkSync(join(k.dir, ".svc"), link);
    for (const name of ["svc.db", "svc.db-wal"]) {
      const viaLink = await k.post<{ error: { message: string } }>("/api/db/backup", { path: join(link, name) });
      expect(viaLink.status).toBe(400);
      expect(viaLink.body.error.message).toBe(`${join(link, name)} is the live database: give another path for the backup`);
    }
    expect(runsIn(join(k.dir, ".svc", "svc.db"))).toBe(runs);
    expect(readdirSync(join(k.dir, ".svc")).filter((f) => f.includes(".partial"))).toEqual([]);
  });
});

describe("POST /api/db/backup: RBAC", () => {
  it("is refused to the built-in operator and viewer roles (admin only by default)", async () => {
    const k = await apiKit(yaml, {
      daemon: "auth:\n  type: bearer\n  bearer:\n    token_file: tokens\n",
      files: { tokens: "op-token operator\nview-token viewer\nadmin-token admin\n" },
    });
    try {
      const post = (token: string) =>
        fetch(`${k.base}/api/db/backup`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ path: join(k.dir, `by-${token}.db`) }) });
      expect((await post("op-token")).status).toBe(403);
      expect((await post("view-token")).status).toBe(403);
      expect((await post("admin-token")).status).toBe(200);
      expect(existsSync(join(k.dir, "by-op-token.db"))).toBe(false);
    } finally {
      await k.close();
    }
  });
});
