import { spawn, spawnSync } from "node:child_process";
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

/** A child process's module: acquirePidLock from this folder and a silent logger, then `body`. */
function childScript(body: string): string {
  const mod = new URL("./pidLock.ts", import.meta.url).pathname;
  return `import { acquirePidLock } from ${JSON.stringify(mod)};
    const log = { debug() {}, info() {}, warn() {}, error() {} };
    ${body}`;
}

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

  it("refuses while another holder has it, naming the holder's pid, and is free again once released", () => {
    const path = join(temp(), "svcd.pid");
    const lock = acquirePidLock(path, memoryLogger());
    expect(() => acquirePidLock(path, memoryLogger(), 4242)).toThrow(LockHeldError);
    expect(() => acquirePidLock(path, memoryLogger(), 4242)).toThrow(`daemon already running (pid ${process.pid})`);
    expect(readFileSync(path, "utf8").trim()).toBe(String(process.pid));
    lock.release();
    acquirePidLock(path, memoryLogger(), 4242).release();
  });

  it("a holder in another process refuses us until it is killed; its pid file is then taken over", async () => {
    const dir = temp();
    const path = join(dir, "svcd.pid");
    const holder = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", childScript(`
      acquirePidLock(process.argv[1], log); process.stdout.write("held\\n"); setInterval(() => {}, 1000);`), path]);
    await new Promise<void>((resolve, reject) => {
      holder.stdout.on("data", (d: Buffer) => d.toString().includes("held") && resolve());
      holder.on("exit", (code) => reject(new Error(`holder exited ${code}`)));
    });
    expect(() => acquirePidLock(path, memoryLogger())).toThrow(`daemon already running (pid ${holder.pid})`);
    holder.kill("SIGKILL");
    await new Promise((r) => holder.once("exit", r));
    expect(readFileSync(path, "utf8").trim()).toBe(String(holder.pid)); // SIGKILL left its pid file
    const log = memoryLogger();
    const lock = acquirePidLock(path, log);
    expect(log.entries.filter((e) => e.level === "warn").map((e) => e.fields.stale_pid)).toEqual([holder.pid]);
    expect(readFileSync(path, "utf8")).toBe(`${process.pid}\n`);
    lock.release();
  });

  it("of daemons started at the same moment only one holds it at a time, with or without a stale pid file (6 processes, 16 rounds)", async () => {
    const rounds = 16;
    const dirs = Array.from({ length: rounds }, () => temp());
    // Every other round starts from a stale pid file: the takeover must not let two in either.
    dirs.forEach((d, i) => i % 2 === 1 && writeFileSync(join(d, "svcd.pid"), "999999999\n"));
    const base = Date.now() + 1_500;
    const racers = Array.from({ length: 6 }, () =>
      new Promise<string>((resolve) => {
        const p = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", childScript(`
          const [dirs, base] = [JSON.parse(process.argv[1]), Number(process.argv[2])];
          const now = () => performance.timeOrigin + performance.now();
          const holds = [];
          for (let r = 0; r < dirs.length; r++) {
            while (Date.now() < base + r * 250) {}
            try {
              const lock = acquirePidLock(dirs[r] + "/svcd.pid", log);
              const from = now();
              while (now() < from + 20) {}
              holds.push([r, from, now()]);
              lock.release();
            } catch (e) { if (e.name !== "LockHeldError") throw e; }
          }
          process.stdout.write(JSON.stringify(holds));`), JSON.stringify(dirs), String(base)]);
        let out = "";
        p.stdout.on("data", (d: Buffer) => (out += d.toString()));
        p.stderr.on("data", (d: Buffer) => (out += d.toString()));
        p.on("close", () => resolve(out));
      }),
    );
    const holds = (await Promise.all(racers)).flatMap((o) => JSON.parse(o) as [number, number, number][]);
    for (let r = 0; r < rounds; r++) {
      const mine = holds.filter((h) => h[0] === r).sort((x, y) => x[1] - y[1]);
      expect(mine.length, `round ${r} had a holder`).toBeGreaterThan(0);
      // Each hold starts after the one before it was released: never two at once.
      for (let i = 1; i < mine.length; i++) expect(mine[i]![1], `round ${r}, hold ${i}`).toBeGreaterThanOrEqual(mine[i - 1]![2]);
    }
  }, 30_000);

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
