import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
    const lock = acquirePidLock(path, memoryLogger());
    expect(readFileSync(path, "utf8").trim()).toBe(String(process.pid));
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
    acquirePidLock(path, memoryLogger()).release();
  });
});
