/**
 * Password brute force against `auth.type: basic` through the built svcd.
 * bcrypt is deliberately slow (about 100 ms of CPU a check at cost 10 here),
 * so a daemon that ran it on its event loop would stall every other client
 * for as long as an attacker keeps guessing. The daemon checks passwords in
 * a worker thread, remembers successful checks, and refuses an address at
 * once after 10 failures a minute.
 *
 * What must hold is checked here without a clock: the CPU time of svcd's
 * threads (/proc/<pid>/task) shows where the bcrypt work ran, and that does
 * not change with how loaded the machine is. How fast a legitimate poller
 * stays (its p99 before and during the attacks) is a figure, measured by
 * bench/isolation.bench.ts (docs/PERFORMANCE.md); this test prints it too.
 *
 * For comparison (docs/SECURITY.md): with bcryptjs's async API on the
 * event loop instead of the worker, the spread phase took the poller's p50
 * to ~90 ms and its p99 to ~620 ms (about 150 times the baseline).
 */
import { request } from "node:http";
import bcrypt from "bcryptjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attack, cpuSplit, poller, spreadSources, threadTicks, TICK_MS } from "../helpers/bruteForce.js";
import { cleanup, project, startDaemon, type DaemonProc } from "../helpers/daemonKit.js";
import { basic, percentile } from "./helpers/security.js";

const PASSWORD = "correct horse battery staple";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const stats = (xs: number[]) => ({ n: xs.length, p50: +percentile(xs, 50).toFixed(1), p99: +percentile(xs, 99).toFixed(1), max: +Math.max(...xs).toFixed(1) });

/** CPU milliseconds of one wrong-password bcrypt check in this process (the median of 3). */
function bcryptCpuMs(hash: string): number {
  const ms = [0, 1, 2].map(() => {
    const t = process.cpuUsage();
    bcrypt.compareSync("a wrong password", hash);
    const d = process.cpuUsage(t);
    return (d.user + d.system) / 1000;
  });
  return ms.sort((a, b) => a - b)[1]!;
}

describe("1,000 wrong passwords do not slow other clients", () => {
  let dir: string;
  let d: DaemonProc;
  let port: number;

  let hash: string;
  beforeAll(async () => {
    // Cost 10, a common production setting: about 100 ms per check on these machines.
    hash = bcrypt.hashSync(PASSWORD, 10);
    dir = project("jobs:\n  hello:\n    command: echo hi\n    frequency: manual\n", {
      daemon: `auth:\n  type: basic\n  basic:\n    users:\n      - username: alice\n        password_hash: "${hash}"\n`,
    });
    d = await startDaemon(dir);
    port = Number(d.addr.slice(d.addr.lastIndexOf(":") + 1));
  });
  afterAll(async () => {
    await d?.stop();
    if (dir) cleanup(dir);
  });

  it("runs bcrypt off the event loop during a brute-force loop, from one address and from many, and a poller with the right password never fails", async () => {
    const SPREAD = 120;
    const poll = poller(port, basic("alice", PASSWORD));
    try {
      await sleep(500); // the first check (bcrypt) and warm-up
      const b0 = poll.mark();
      await sleep(2_000);
      const before = stats(poll.since(b0));

      // 1,000 wrong passwords from one address (127.0.0.2), 8 at a time.
      const s0 = poll.mark();
      const single = await attack(port, 1_000, 8, ["127.0.0.2"]);
      const duringSingle = stats(poll.since(s0));

      // Then 120 more spread over 60 addresses: every one goes to bcrypt.
      const m0 = poll.mark();
      const cpu0 = threadTicks(d.proc.pid!);
      const spread = await attack(port, SPREAD, 8, spreadSources(60));
      const cpu = cpuSplit(d.proc.pid!, cpu0, threadTicks(d.proc.pid!));
      const duringSpread = stats(poll.since(m0));

      const checkMs = bcryptCpuMs(hash);
      const work = { bcryptCheckCpuMs: +checkMs.toFixed(1), spreadBcryptCpuMs: Math.round(SPREAD * checkMs), mainThreadCpuMs: cpu.main * TICK_MS, otherThreadsCpuMs: cpu.others * TICK_MS };
      console.log(`brute force: ${JSON.stringify({ before, duringSingle, single, duringSpread, spread, work }, null, 1)}`);

      // Every attempt was refused; only 10 a minute from one address reached bcrypt.
      expect(Object.keys(single.tally).every((k) => k.startsWith("401 "))).toBe(true);
      expect(single.tally["401 invalid username or password"]).toBe(10 * Math.ceil(single.ms / 60_000));
      expect(spread.tally).toEqual({ "401 invalid username or password": SPREAD });
      // The 120 checks ran, and not on the main thread (the event loop): CPU time, the same on a loaded machine.
      // A check on the loop would put about SPREAD * checkMs there; the main thread's own work (answering about
      // 1,000 requests) is a few percent of it. bcryptjs's CPU time per check varies little between processes.
      expect(work.otherThreadsCpuMs).toBeGreaterThan(0.5 * work.spreadBcryptCpuMs);
      expect(work.mainThreadCpuMs).toBeLessThan(0.25 * work.spreadBcryptCpuMs);
      // The poller never failed and kept being answered throughout.
      expect([...poll.statuses.keys()]).toEqual([200]);
      expect(duringSingle.n).toBeGreaterThan(20);
      expect(duringSpread.n).toBeGreaterThan(20);
    } finally {
      await poll.stop();
    }
  }, 120_000);

  it("refuses an address after 10 failures, even with the right password, and says when to retry; other addresses sign in", async () => {
    const from = (localAddress: string, password: string) =>
      new Promise<{ status: number; retry: string | undefined; message: string }>((resolve) => {
        const req = request({ host: "127.0.0.1", port, path: "/api/status", localAddress, headers: { authorization: basic("alice", password) } }, (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, retry: res.headers["retry-after"], message: JSON.parse(text).error?.message ?? "" }));
        });
        req.end();
      });
    for (let i = 0; i < 10; i++) expect((await from("127.0.0.4", `nope-${i}`)).message).toBe("invalid username or password");
    const refused = await from("127.0.0.4", PASSWORD);
    expect(refused.status).toBe(401);
    expect(refused.message).toMatch(/^too many failed sign-ins from 127\.0\.0\.4: try again in \d+ s$/);
    expect(Number(refused.retry)).toBeGreaterThan(0);
    expect(Number(refused.retry)).toBeLessThanOrEqual(60);
    expect((await from("127.0.0.5", PASSWORD)).status).toBe(200);
    expect(d.output()).toContain("too many failed sign-ins from 127.0.0.4");
    expect(d.output()).not.toContain("nope-");
  });
});
