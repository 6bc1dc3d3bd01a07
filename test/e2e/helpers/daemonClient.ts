/**
 * e2e helpers for the daemon-client commands: a temp project whose daemon is
 * started by `svc start` (detached, as users do), `svc` runs against it, a
 * direct JSON request over the Unix socket or TCP for polling, a local
 * webhook receiver, and a stop that always works (svc stop, then SIGKILL by
 * the pid file). Every test file registers its projects and stops them all
 * in afterAll, even when a test failed.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { standIn } from "../../helpers/standIn.js";
import { runSvc, SVC_BIN, tempProject, type RunOptions, type RunResult, type TempProject } from "./cli.js";

export interface ClientProject extends TempProject {
  dataDir: string;
  /** `svc ...args` in the project directory (TZ=UTC, NO_COLOR unset unless given). */
  svc(args: string[], opts?: RunOptions): Promise<RunResult>;
  /** `svc start`; throws with its output unless it exits 0. Returns the printed URL. */
  start(): Promise<string>;
  /** host:port from <data>/api.addr. */
  addr(): string;
  /** JSON request over the Unix socket (or TCP with `tcp: true`). */
  api<T = unknown>(method: string, path: string, body?: unknown, opts?: { tcp?: boolean; headers?: Record<string, string> }): Promise<{ status: number; body: T }>;
  /** The daemon's pid from <data>/svcd.pid, or null. */
  pid(): number | null;
  /** Stops the daemon whatever its state (svc stop --force, then SIGKILL). */
  stop(): Promise<void>;
}

export function clientProject(files: Record<string, string>, opts: { dataDir?: string } = {}): ClientProject {
  const p = tempProject(files);
  const dataDir = opts.dataDir ?? join(p.dir, ".svc");
  const dataArgs = opts.dataDir ? ["--data-dir", opts.dataDir] : [];
  const cp: ClientProject = {
    ...p,
    dataDir,
    svc: (args, o = {}) => runSvc([...dataArgs, ...args], { cwd: p.dir, timeoutMs: 30_000, ...o, env: { TZ: "UTC", NO_COLOR: undefined, FORCE_COLOR: undefined, ...o.env } }),
    async start() {
      const r = await cp.svc(["start"]);
      if (r.code !== 0) throw new Error(`svc start failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
      return r.stdout.trim();
    },
    addr: () => readFileSync(join(dataDir, "api.addr"), "utf8").trim(),
    api(method, path, body, o = {}) {
      if (o.tcp) {
        const addr = cp.addr();
        const i = addr.lastIndexOf(":");
        return httpJson({ host: addr.slice(0, i), port: Number(addr.slice(i + 1)) }, method, path, body, o.headers);
      }
      return httpJson({ socketPath: join(dataDir, "svcd.sock") }, method, path, body, o.headers);
    },
    pid() {
      try {
        const n = Number.parseInt(readFileSync(join(dataDir, "svcd.pid"), "utf8"), 10);
        return Number.isInteger(n) && n > 0 ? n : null;
      } catch {
        return null;
      }
    },
    async stop() {
      const pid = cp.pid();
      if (pid === null) return;
      await cp.svc(["stop", "--force", "--timeout", "10"], { timeoutMs: 15_000 }).catch(() => undefined);
      if (alive(pid)) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone meanwhile
        }
        await until("the daemon to die", () => !alive(pid), 10_000).catch(() => undefined);
      }
    },
  };
  return cp;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

import { httpJson, until } from "../../helpers/daemonKit.js";

export { httpJson, until };

export interface RunRow {
  id: number;
  job_name: string;
  status: string;
  reason: string | null;
  [k: string]: unknown;
}

/** Waits until run `id` is terminal and returns it. */
export async function waitRun(p: ClientProject, id: number, ms = 20_000): Promise<RunRow> {
  return until(
    `run ${id} to finish`,
    async () => {
      const r = await p.api<RunRow>("GET", `/api/runs/${id}`);
      return ["SUCCESS", "FAILED", "SKIPPED"].includes(r.body.status) ? r.body : null;
    },
    ms,
  );
}

/** A webhook receiver on 127.0.0.1 that answers `status` and records bodies. */
export interface Receiver {
  url: string;
  bodies: unknown[];
  status: number;
  close(): Promise<void>;
}

export async function receiver(): Promise<Receiver> {
  const rx: Receiver = { url: "", bodies: [], status: 200, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      try {
        rx.bodies.push(JSON.parse(text));
      } catch {
        rx.bodies.push(text);
      }
      res.writeHead(rx.status, { "content-type": "application/json" }).end(JSON.stringify({ received: true }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  rx.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  rx.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return rx;
}

/**
 * The daemon a test file shares: its project is created and started with
 * `svc start` in beforeAll, stopped and removed in afterAll (even when a test
 * failed). Given a function, a webhook receiver is started first, its URL is
 * passed in (for `notify: webhook:URL`), and it is closed after the daemon.
 * `p` and `rx` stand for the started project and receiver: use them in tests
 * and hooks (see standIn).
 */
export function sharedDaemon(files: Record<string, string> | ((hookUrl: string) => Record<string, string>)): { p: ClientProject; rx: Receiver } {
  let project: ClientProject | undefined;
  let rx: Receiver | undefined;
  beforeAll(async () => {
    if (typeof files === "function") rx = await receiver();
    project = clientProject(typeof files === "function" ? files(rx!.url) : files);
    await project.start();
  });
  afterAll(async () => {
    await project?.stop();
    await rx?.close();
    project?.remove();
  });
  return {
    p: standIn(() => project, "the shared project"),
    rx: standIn(() => rx, typeof files === "function" ? "the shared webhook receiver" : "a receiver (pass sharedDaemon a function of the hook URL)"),
  };
}

/** A `svc` process running in the background (logs --tail, run --wait). */
export interface LiveSvc {
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code when the process ends. */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
}

export function spawnSvc(p: ClientProject, args: string[], env: Record<string, string> = {}): LiveSvc {
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SVC_")) childEnv[k] = v;
  Object.assign(childEnv, { TZ: "UTC" }, env);
  delete childEnv.NO_COLOR;
  delete childEnv.FORCE_COLOR;
  const dataArgs = p.dataDir === join(p.dir, ".svc") ? [] : ["--data-dir", p.dataDir];
  const child = spawn(process.execPath, [SVC_BIN, ...dataArgs, ...args], { cwd: p.dir, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  void exited.then(() => clearTimeout(timer));
  return { stdout: () => out, stderr: () => err, exited, kill: (s = "SIGTERM") => void child.kill(s) };
}

export function fileExists(path: string): boolean {
  return existsSync(path);
}
