import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { memoryLogger } from "../shared/logger.js";
import { acquirePidLock, LockHeldError } from "./pidLock.js";

const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "svc-lock-"));
  dirs.push(d);
  return d;
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("acquirePidLock", () => {
  it("creates the file with our pid, mode 0600, and releases it", () => {
    const path = join(temp(), "svcd.pid");
    // umask 0 for the call: the file's mode is then exactly the one acquirePidLock asks for,
    // not one a restrictive umask of the machine running the test would have narrowed to 0600.
    const old = process.umask(0);
    let lock;
    try {
      lock = acquirePidLock(path, memoryLogger());
    } finally {
      process.umask(old);
    }
    expect((statSync(path).mode & 0o777).toString(8)).toBe("600");
    expect(readFileSync(path, "utf8")).toBe(`${process.pid}\n`);
    lock.release();
    expect(existsSync(path)).toBe(false);
    lock.release(); // twice is fine
  });

  it("refuses when a live process holds it", () => {
    const path = join(temp(), "svcd.pid");
    writeFileSync(path, `${process.ppid}\n`);
    expect(() => acquirePidLock(path, memoryLogger())).toThrow(LockHeldError);
    expect(() => acquirePidLock(path, memoryLogger())).toThrow(`daemon already running (pid ${process.ppid})`);
    expect(readFileSync(path, "utf8").trim()).toBe(String(process.ppid));
  });

  it("takes over a stale lock with a warning", () => {
    const path = join(temp(), "svcd.pid");
    const dead = spawnSync("/bin/sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim();
    writeFileSync(path, `${dead}\n`);
    const log = memoryLogger();
    acquirePidLock(path, log).release();
    expect(log.entries.some((e) => e.level === "warn" && e.msg.includes("stale"))).toBe(true);
  });

  it("takes over a garbage lock file", () => {
    const path = join(temp(), "svcd.pid");
    writeFileSync(path, "not a pid");
    const log = memoryLogger();
    const lock = acquirePidLock(path, log);
    expect(readFileSync(path, "utf8")).toBe(`${process.pid}\n`);
    expect(log.entries.filter((e) => e.level === "warn").map((e) => [e.msg, e.fields.stale_pid])).toEqual([
      ["taking over a stale daemon lock (its process is gone)", null],
    ]);
    lock.release();
    expect(existsSync(path)).toBe(false);
  });
});
