/**
 * Real `svcd` processes for benchmarks, built from the working tree into a
 * private directory (node_modules/.cache/svc-bench/dist, so that module
 * resolution still finds node_modules) so a bench never depends on, nor
 * rewrites, the shared dist/ that other engineers' tests use.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { dirname, join, resolve } from "node:path";
import { sleep } from "./stats.js";

export const ROOT = resolve(import.meta.dirname, "../..");
/** SVC_BENCH_BUILD names another build directory, compiled beforehand (A/B runs of a fix); it is then used as is. */
const ALT_BUILD = process.env.SVC_BENCH_BUILD;
export const BUILD_DIR = join(ROOT, "node_modules", ".cache", ALT_BUILD ?? "svc-bench");
/** The node entry of the build, and beside it a copy of bin/svcd, the launcher users run (it execs `node <itself>.js`). */
const ENTRY = join(BUILD_DIR, "svcd.js");
const LAUNCHER = join(BUILD_DIR, "svcd");

let built = false;

/** Compiles src/ with tsc (incremental) into BUILD_DIR/dist; once per process. */
export function ensureBuild(): string {
  if (built) return ENTRY;
  if (ALT_BUILD) {
    if (!existsSync(join(BUILD_DIR, "dist", "cli", "main.js"))) throw new Error(`SVC_BENCH_BUILD=${ALT_BUILD}: ${BUILD_DIR} has no build`);
    return writeEntries();
  }
  mkdirSync(BUILD_DIR, { recursive: true });
  const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.build.json"), "--outDir", join(BUILD_DIR, "dist"), "--tsBuildInfoFile", join(BUILD_DIR, "dist", ".tsbuildinfo")], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (e) {
    // tsc emits even with type errors (another engineer's work in progress): carry on when the entry exists.
    if (!existsSync(join(BUILD_DIR, "dist", "cli", "main.js"))) throw e;
    const out = (e as { stdout?: Buffer }).stdout?.toString() ?? "";
    process.stderr.write(`bench: tsc reported errors (using the emitted JavaScript anyway):\n${out.slice(0, 2_000)}\n`);
  }
  // version.ts reads package.json two levels above dist/shared.
  copyFileSync(join(ROOT, "package.json"), join(BUILD_DIR, "package.json"));
  // The one-file daemon that bin/svcd.js runs (scripts/bundle-svcd.mjs).
  execFileSync(process.execPath, [join(ROOT, "scripts", "bundle-svcd.mjs"), join(BUILD_DIR, "dist")], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  return writeEntries();
}

/**
 * The build's bin/svcd.js (the bundle) and bin/svcd (the launcher, copied from the working tree), and
 * the posix_spawn binding that npm install built (dist/executor/posixSpawn.ts loads it from ../../build).
 */
function writeEntries(): string {
  const native = join(ROOT, "build", "Release", "svc_spawn.node");
  if (existsSync(native)) {
    mkdirSync(join(BUILD_DIR, "build", "Release"), { recursive: true });
    // A new file renamed into place: copied over the old one, the binding an svcd of another bench still has mapped
    // (the same build directory) changed under it, and that svcd died (a lost soak).
    const copy = join(BUILD_DIR, "build", "Release", `svc_spawn.node.${process.pid}`);
    copyFileSync(native, copy);
    renameSync(copy, join(BUILD_DIR, "build", "Release", "svc_spawn.node"));
  }
  writeFileSync(ENTRY, `import { main } from "./dist/bundle/svcd.mjs";\nmain(["daemon", "run", ...process.argv.slice(2)]);\n`);
  copyFileSync(join(ROOT, "bin", "svcd"), LAUNCHER);
  built = true;
  return ENTRY;
}

export interface Daemon {
  dir: string;
  pid: number;
  proc: ChildProcess;
  addr: string;
  /** Spawn -> api.addr written, ms. */
  addrMs: number;
  /** Spawn -> first 200 from GET /api/status, ms. */
  readyMs: number;
  /** The last 64 KiB of the daemon's stdout+stderr. */
  output(): string;
  get<T = unknown>(path: string): Promise<{ status: number; body: T; ms: number }>;
  post<T = unknown>(path: string, body?: unknown): Promise<{ status: number; body: T; ms: number }>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves on exit. */
  stop(graceMs?: number): Promise<void>;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

export function httpJson<T>(addr: string, method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<{ status: number; body: T; ms: number }> {
  const i = addr.lastIndexOf(":");
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const t0 = performance.now();
  return new Promise((resolveP, reject) => {
    const req = request(
      {
        host: addr.slice(0, i),
        port: Number(addr.slice(i + 1)),
        method,
        path,
        agent,
        headers: data ? { "content-type": "application/json", "content-length": String(data.length) } : {},
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const ms = performance.now() - t0;
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolveP({ status: res.statusCode ?? 0, body: parsed as T, ms });
        });
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)));
    if (data) req.write(data);
    req.end();
  });
}

/**
 * Starts svcd on `<dir>/svc.yaml` (a fresh `.svc` data dir unless `keepData`)
 * the way users do, through the bin/svcd launcher (one malloc arena), and
 * waits until GET /api/status answers.
 */
export async function startDaemon(
  dir: string,
  opts: {
    keepData?: boolean;
    timeoutMs?: number;
    env?: NodeJS.ProcessEnv;
    /** Answers of GET /api/status that mean "up" (default 200; 401 under auth). */
    readyStatus?: number;
    /**
     * Node's own flags (`--trace-gc`, which NODE_OPTIONS refuses): node is then started directly, with the
     * environment bin/svcd would give it (one malloc arena).
     */
    nodeArgs?: string[];
    /** Every chunk svcd writes to stdout or stderr. */
    onOutput?: (chunk: string) => void;
  } = {},
): Promise<Daemon> {
  ensureBuild();
  const dataDir = join(dir, ".svc");
  if (!opts.keepData) rmSync(dataDir, { recursive: true, force: true });
  else rmSync(join(dataDir, "api.addr"), { force: true });
  const addrFile = join(dataDir, "api.addr");
  let out = "";
  const t0 = performance.now();
  // `node` on PATH, as the launcher runs it: this process's own first.
  const path = `${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`;
  const args = ["-c", join(dir, "svc.yaml")];
  const proc = opts.nodeArgs
    ? spawn(process.execPath, [...opts.nodeArgs, ENTRY, ...args], {
        cwd: dir,
        env: { ...process.env, PATH: path, MALLOC_ARENA_MAX: "1", SVCD_LAUNCHER_ENV: "MALLOC_ARENA_MAX", ...opts.env },
        stdio: ["ignore", "pipe", "pipe"],
      })
    : spawn("/bin/sh", [LAUNCHER, ...args], {
        cwd: dir,
        env: { ...process.env, PATH: path, ...opts.env },
        stdio: ["ignore", "pipe", "pipe"],
      });
  const keep = (c: Buffer) => {
    const text = c.toString();
    opts.onOutput?.(text);
    out += text;
    if (out.length > 131_072) out = out.slice(-65_536);
  };
  proc.stdout!.on("data", keep);
  proc.stderr!.on("data", keep);
  let exited = false;
  const exit = new Promise<void>((r) => proc.on("exit", () => ((exited = true), r())));
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  const waitFor = async <T>(what: string, fn: () => Promise<T | null> | T | null, everyMs: number): Promise<T> => {
    for (;;) {
      if (exited) throw new Error(`svcd exited while waiting for ${what}:\n${out.slice(-4_000)}`);
      const v = await fn();
      if (v !== null) return v;
      if (Date.now() > deadline) {
        proc.kill("SIGKILL");
        throw new Error(`svcd: timed out waiting for ${what}:\n${out.slice(-4_000)}`);
      }
      await sleep(everyMs);
    }
  };
  const addr = await waitFor("api.addr", () => (existsSync(addrFile) ? readFileSync(addrFile, "utf8").trim() || null : null), 2);
  const addrMs = performance.now() - t0;
  await waitFor(
    "GET /api/status",
    async () => {
      try {
        return (await httpJson(addr, "GET", "/api/status", undefined, 60_000)).status === (opts.readyStatus ?? 200) ? true : null;
      } catch {
        return null;
      }
    },
    2,
  );
  const readyMs = performance.now() - t0;
  return {
    dir,
    pid: proc.pid!,
    proc,
    addr,
    addrMs,
    readyMs,
    output: () => out,
    get: (path) => httpJson(addr, "GET", path),
    post: (path, body) => httpJson(addr, "POST", path, body ?? {}),
    async stop(graceMs = 15_000) {
      if (exited) return;
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}

const CLK_TCK = 100; // USER_HZ on Linux

/** User + system CPU time of a process (not its children), ms; null when it is gone. */
export function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields after "(comm)": state is f[0], utime is field 14 => f[11], stime f[12]
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return null;
  }
}

/** VmRSS and VmHWM (peak) of a process, MB. */
export function memMb(pid: number): { rss: number; peak: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? NaN);
    return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
  } catch {
    return null;
  }
}
