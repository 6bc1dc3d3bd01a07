/**
 * A password brute force against a real svcd with `auth.type: basic`, and a
 * legitimate client polling beside it: used by the e2e test
 * (test/e2e/security-bruteforce.test.ts, what must hold) and by the
 * benchmark (bench/isolation.bench.ts, how fast it stays).
 */
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { Agent, request } from "node:http";

/** The attacker, in its own process: `count` wrong passwords, `concurrency` at a time, from the given source addresses in turn. */
const ATTACKER = `
import { request, Agent } from "node:http";
const [port, count, concurrency, sources] = [Number(process.argv[1]), Number(process.argv[2]), Number(process.argv[3]), process.argv[4].split(",")];
const agents = new Map(sources.map((s) => [s, new Agent({ keepAlive: true, localAddress: s })]));
const tally = {};
let next = 0;
const started = Date.now();
async function one(i) {
  const src = sources[i % sources.length];
  const auth = "Basic " + Buffer.from("alice:guess-" + i).toString("base64");
  const body = await new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/api/jobs", headers: { authorization: auth }, agent: agents.get(src) }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve(res.statusCode + " " + (JSON.parse(text).error?.message ?? "").replace(/[0-9.]+/g, "N")));
    });
    req.on("error", (e) => resolve("error " + e.message));
    req.end();
  });
  tally[body] = (tally[body] ?? 0) + 1;
}
await Promise.all(Array.from({ length: concurrency }, async () => { while (next < count) await one(next++); }));
console.log(JSON.stringify({ ms: Date.now() - started, tally }));
process.exit(0);
`;

export interface AttackResult {
  ms: number;
  /** "<status> <error message with digits as N>" -> count. */
  tally: Record<string, number>;
}

/** Runs the attacker (user "alice", wrong passwords) to its end. */
export function attack(port: number, count: number, concurrency: number, sources: string[]): Promise<AttackResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", ATTACKER, String(port), String(count), String(concurrency), sources.join(",")], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as AttackResult) : reject(new Error(`attacker exited ${code}: ${err}`))));
  });
}

/** `count` addresses 127.0.1.1... for a spread attack (the per-address limit cannot stop it). */
export const spreadSources = (count: number): string[] => Array.from({ length: count }, (_, i) => `127.0.1.${i + 1}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A legitimate client: one request at a time on a kept-alive connection, every 10 ms, until `stop()`. */
export function poller(port: number, auth: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: "127.0.0.1" });
  const samples: number[] = [];
  const statuses = new Map<number, number>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      const status = await new Promise<number>((resolve) => {
        const req = request({ host: "127.0.0.1", port, path: "/api/status", headers: { authorization: auth }, agent }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("error", () => resolve(0));
        req.end();
      });
      samples.push(performance.now() - t0);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      await sleep(10);
    }
  })();
  return {
    /** Latencies from now on. */
    mark: () => samples.length,
    since: (from: number) => samples.slice(from),
    statuses,
    async stop() {
      running = false;
      await loop;
      agent.destroy();
    },
  };
}

/**
 * CPU time (user + system, in clock ticks) of each thread of a process, by
 * thread id: /proc/<pid>/task/<tid>/stat fields 14 and 15. The main thread's
 * id is the pid. Time on a CPU, not wall time: the share of work a thread did
 * does not change with how loaded the machine is.
 */
export function threadTicks(pid: number): Map<number, number> {
  const ticks = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // the thread ended meanwhile
    }
    // Fields after the command name, which sits in parentheses and may hold spaces: field 3 is index 0.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks.set(Number(tid), Number(fields[11]) + Number(fields[12]));
  }
  return ticks;
}

/** Milliseconds in one clock tick (getconf CLK_TCK, 100 on Linux). */
export const TICK_MS = 1000 / Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim() || 100);

/** CPU ticks between two threadTicks readings: the main thread's and all the others' together. */
export function cpuSplit(pid: number, before: Map<number, number>, after: Map<number, number>): { main: number; others: number } {
  let main = 0;
  let others = 0;
  for (const [tid, t] of after) {
    const d = t - (before.get(tid) ?? 0);
    if (tid === pid) main += d;
    else others += d;
  }
  return { main, others };
}
