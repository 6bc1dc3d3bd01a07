import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request, type Agent } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { until } from "./until.js";

export const ROOT = resolve(import.meta.dirname, "../..");
export const SVCD = join(ROOT, "bin", "svcd.js");
export const SVC = join(ROOT, "bin", "svc.js");

export interface DaemonProc {
  dir: string;
  dataDir: string;
  proc: ChildProcess;
  /** Everything the daemon wrote to stdout and stderr so far. */
  output(): string;
  /** host:port from <data>/api.addr. */
  addr: string;
  base: string;
  /** JSON request over TCP. */
  api<T = unknown>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: T }>;
  /** JSON request over the Unix socket. */
  sock<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/** A temp project directory with svc.yaml (and optional svcd.yaml and files). */
export function project(yaml: string, opts: { daemon?: string; files?: Record<string, string>; dir?: string } = {}): string {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "svc-e2e-"));
  writeFileSync(join(dir, "svc.yaml"), yaml);
  if (opts.daemon !== undefined) writeFileSync(join(dir, "svcd.yaml"), opts.daemon);
  for (const [p, content] of Object.entries(opts.files ?? {})) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), content, { mode: 0o755 });
  }
  return dir;
}

export function httpJson<T>(
  opts: { host?: string; port?: number; socketPath?: string; agent?: Agent },
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T }> {
  return new Promise((resolvePromise, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = request(
      {
        ...opts,
        method,
        path,
        headers: { ...(data ? { "content-type": "application/json", "content-length": String(data.length) } : {}), ...headers },
        timeout: 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolvePromise({ status: res.statusCode ?? 0, body: parsed as T });
        });
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error(`${method} ${path} timed out`)));
    if (data) req.write(data);
    req.end();
  });
}

/** Polls `pred` until it returns a truthy value (real time). */
export { until };

/** bin/svcd: the launcher users run (a shell script that execs `node bin/svcd.js`). */
export const SVCD_LAUNCHER = join(ROOT, "bin", "svcd");

/**
 * Starts the built `svcd` on a project directory and waits until it answers:
 * `node bin/svcd.js`, or with `via: "launcher"` bin/svcd, with this process's
 * node first on PATH.
 */
export async function startDaemon(dir: string, extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}, via: "node" | "launcher" = "node"): Promise<DaemonProc> {
  const dataDir = join(dir, ".svc");
  // A daemon killed with SIGKILL leaves its api.addr behind: do not mistake it for the new one's.
  rmSync(join(dataDir, "api.addr"), { force: true });
  let out = "";
  const [file, entry, path] =
    via === "node" ? [process.execPath, SVCD, process.env.PATH] : ["/bin/sh", SVCD_LAUNCHER, `${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`];
  const proc = spawn(file, [entry, "-c", join(dir, "svc.yaml"), ...extraArgs], {
    cwd: dir,
    env: { ...process.env, PATH: path, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  proc.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => proc.on("exit", (code) => r(code)));
  let dead = false;
  void exited.then(() => (dead = true));
  const addrFile = join(dataDir, "api.addr");
  await until(`svcd to write api.addr (output so far: ${out})`, () => {
    if (dead) throw new Error(`svcd exited during startup:\n${out}`);
    return existsSync(addrFile) && readFileSync(addrFile, "utf8").trim() !== "";
  });
  const addr = readFileSync(addrFile, "utf8").trim();
  const [host, port] = [addr.slice(0, addr.lastIndexOf(":")), Number(addr.slice(addr.lastIndexOf(":") + 1))];
  return {
    dir,
    dataDir,
    proc,
    output: () => out,
    addr,
    base: `http://${addr}`,
    api: (method, path, body, headers) => httpJson({ host, port }, method, path, body, headers),
    sock: (method, path, body) => httpJson({ socketPath: join(dataDir, "svcd.sock") }, method, path, body),
    async stop(signal = "SIGTERM") {
      if (!dead) proc.kill(signal);
      return exited;
    },
    exited,
  };
}

/** Runs the built svcd to completion (for startup failures); returns code and output. */
export function runDaemonOnce(dir: string, args: string[] = [], ms = 15_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolvePromise) => {
    let out = "";
    const proc = spawn(process.execPath, [SVCD, "-c", join(dir, "svc.yaml"), ...args], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    proc.stdout!.on("data", (c: Buffer) => (out += c.toString()));
    proc.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => proc.kill("SIGKILL"), ms);
    proc.on("exit", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, output: out });
    });
  });
}

export function cleanup(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
