/**
 * The physical limits on this machine, measured the way svc would pay them:
 * each job in its own process group with piped stdout/stderr, started with
 * child_process.spawn (`detached: true`), the raw spawn the issues' targets
 * name, or with posix_spawn through svc's own posixSpawn (how svcd starts
 * jobs on Linux, src/executor/posixSpawn.ts), reported beside it. (The raw
 * better-sqlite3 insert rate is measured by bench/store.bench.ts.)
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { posixSpawn, posixSpawnAsyncPromise, spawnMethod, type SpawnedChild } from "../../src/executor/posixSpawn.js";

const ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

/** "fork": child_process.spawn; "posix_spawn": svc's posixSpawn (the event loop waits for the kernel); "posix_spawn_async": svc's posixSpawnAsync (on a worker thread, how svcd starts jobs). */
export type SpawnWay = "fork" | "posix_spawn" | "posix_spawn_async";

async function spawnAsync(cmd: string[], cwd: string): Promise<SpawnedChild> {
  const child = await posixSpawnAsyncPromise(cmd[0]!, cmd.slice(1), { cwd, env: ENV });
  if (child === null) throw new Error("posixSpawnAsync is not available here");
  if (child instanceof Error) throw child;
  return child;
}

/** Whether posix_spawn can be measured here (svc's binding is built and this is Linux). */
export const POSIX_SPAWN = spawnMethod === "posix_spawn";

/** Spawns `cmd` like svc does (`way`); resolves with its stdout when it has exited and its pipes ended. */
export async function rawRun(cmd: string[], cwd = "/", way: SpawnWay = "fork"): Promise<string> {
  const child =
    way === "posix_spawn_async"
      ? await spawnAsync(cmd, cwd)
      : way === "posix_spawn"
        ? (posixSpawn(cmd[0]!, cmd.slice(1), { cwd, env: ENV }) as SpawnedChild)
        : spawn(cmd[0]!, cmd.slice(1), { cwd, env: ENV, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", () => {});
  const closed = Promise.all([once(child.stdout, "close"), once(child.stderr, "close")]);
  await once(child, "exit");
  await closed;
  return out;
}


/** `start` with `inFlight` kept running for `ms`: how many completed, and the wall time they took (ms). */
export async function closedLoop(start: () => Promise<unknown>, inFlight: number, ms: number): Promise<{ done: number; ms: number }> {
  const t0 = performance.now();
  const end = t0 + ms;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      await start();
      done++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { done, ms: performance.now() - t0 };
}

/** Completed runs per second of `start` with `inFlight` kept running for `ms`. */
export async function closedLoopRate(start: () => Promise<unknown>, inFlight: number, ms: number): Promise<number> {
  const { done, ms: took } = await closedLoop(start, inFlight, ms);
  return (done * 1_000) / took;
}

/** Parses `date +%s.%N` output into epoch ms (microsecond precision). */
export function parseDateNs(text: string): number {
  const m = /(\d+)\.(\d{9})/.exec(text);
  if (!m) return NaN;
  return Number(m[1]) * 1_000 + Number(m[2]!.slice(0, 6)) / 1_000;
}

/** First whole second at least `leadMs` from now. */
export function nextWholeSecond(leadMs = 300): number {
  return Math.ceil((Date.now() + leadMs) / 1_000) * 1_000;
}

/**
 * The floor of dispatching `n` jobs due at one instant from a Node process:
 * a timer at a whole second, then `n` spawns of `cmd` in a row. Returns the
 * instant and each process's stdout.
 */
export async function rawBurst(n: number, cmd: string[], way: SpawnWay = "fork"): Promise<{ target: number; outs: string[] }> {
  const target = nextWholeSecond();
  await new Promise((r) => setTimeout(r, target - Date.now()));
  const outs = await Promise.all(Array.from({ length: n }, () => rawRun(cmd, "/", way)));
  return { target, outs };
}

/** rawBurst of `date +%s.%N`: each process's start delay after the instant, ms. */
export async function rawBurstDelays(n: number, way: SpawnWay = "fork"): Promise<number[]> {
  const { target, outs } = await rawBurst(n, ["/bin/date", "+%s.%N"], way);
  return outs.map((o) => parseDateNs(o) - target);
}

/**
 * The burst child's spawn loop: `burstAt(target, n, cmd, env, posix)`
 * sleeps to the instant `target` and spawns `n` of `cmd` at once the way svc
 * does (pipes, detached): with child_process (fork), or with `posix`, the
 * path of svc's compiled posixSpawn.js (posix_spawn, what svcd uses on
 * Linux). It resolves when all have exited and closed their pipes.
 */
const BURST_AT = `
import { spawn } from "node:child_process";
import { once } from "node:events";
async function starter(posix) {
  if (!posix) return (cmd, env) => spawn(cmd[0], cmd.slice(1), { cwd: "/", env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const { posixSpawn, spawnMethod } = await import(posix);
  if (spawnMethod !== "posix_spawn") throw new Error("posix_spawn is not available (build/Release/svc_spawn.node)");
  return (cmd, env) => posixSpawn(cmd[0], cmd.slice(1), { cwd: "/", env });
}
async function burstAt(target, n, cmd, env, posix) {
  const start = await starter(posix);
  await new Promise((r) => setTimeout(r, target - Date.now()));
  await Promise.all(Array.from({ length: n }, async () => {
    const c = start(cmd, env);
    c.stdout.on("data", () => {});
    c.stderr.on("data", () => {});
    const closed = Promise.all([once(c.stdout, "close"), once(c.stderr, "close")]);
    await once(c, "exit");
    await closed;
  }));
}
`;

/** The body of rawBurstInFreshNode's child: a minimal Node process, no modules loaded. */
const FRESH_BURST = `${BURST_AT}
const [n, env, posix, ...cmd] = JSON.parse(process.argv[1]);
const target = Math.ceil((Date.now() + 300) / 1000) * 1000;
await burstAt(target, n, cmd, env, posix);
process.stdout.write(String(target));
`;

/**
 * rawBurst from a fresh, minimal Node process (no modules, ~40 MB): fork
 * costs grow with the parent's memory, so this is the floor any Node
 * scheduler pays here, independent of how big the benchmark process is.
 * `env` is each process's environment (default: PATH alone); to spawn the
 * same processes as a scheduler does, pass the environment it gives them.
 * `posix`: spawn with posix_spawn through this posixSpawn.js instead of
 * child_process (the module loads nothing but Node's own).
 */
export function rawBurstInFreshNode(n: number, cmd: string[], env: Record<string, string> = ENV, posix: string | null = null): Promise<{ target: number }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["--input-type=module", "-e", FRESH_BURST, JSON.stringify([n, env, posix, ...cmd])], { timeout: 30_000 }, (err, stdout) => {
      if (err) reject(err);
      else resolve({ target: Number(stdout.trim()) });
    });
  });
}

/** The body of rawLoopInFreshNode's child: `total` spawns of `cmd`, `inFlight` at a time, then the rate on stdout. */
const FRESH_LOOP = `
import { spawn } from "node:child_process";
import { once } from "node:events";
const [total, inFlight, env, ...cmd] = JSON.parse(process.argv[1]);
let started = 0;
const t0 = performance.now();
await Promise.all(Array.from({ length: inFlight }, async () => {
  while (started < total) {
    started++;
    const c = spawn(cmd[0], cmd.slice(1), { cwd: "/", env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    c.stdout.on("data", () => {});
    c.stderr.on("data", () => {});
    const closed = Promise.all([once(c.stdout, "close"), once(c.stderr, "close")]);
    await once(c, "exit");
    await closed;
  }
}));
process.stdout.write(String((total * 1000) / (performance.now() - t0)));
`;

/**
 * `total` raw `child_process.spawn`s of `cmd` (pipes, detached, as svc starts a job), `inFlight` at a time,
 * from a fresh, minimal Node process: spawns per second. The floor a Node scheduler would pay with
 * child_process, independent of how big the benchmark process is.
 */
export function rawLoopInFreshNode(total: number, inFlight: number, cmd: string[], env: Record<string, string> = ENV): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["--input-type=module", "-e", FRESH_LOOP, JSON.stringify([total, inFlight, env, ...cmd])], { timeout: 120_000 }, (err, stdout) => {
      if (err) reject(err);
      else resolve(Number(stdout.trim()));
    });
  });
}
