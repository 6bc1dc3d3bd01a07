/**
 * Shared e2e helpers: a temp project directory, and running the built
 * binaries (bin/svc.js, bin/svcd.js) with captured stdout, stderr and exit
 * code. The binaries load dist/: `npm test` builds it first (pretest).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "..", "..", "..");
export const SVC_BIN = join(ROOT, "bin", "svc.js");
export const SVCD_BIN = join(ROOT, "bin", "svcd.js");

export interface TempProject {
  dir: string;
  /** Absolute path of a file in the project. */
  path(name: string): string;
  /** Writes a file (parents created); strings as UTF-8, Buffers as is. */
  write(name: string, content: string | Buffer, mode?: number): string;
  remove(): void;
}

/** A fresh directory with the given files (e.g. {"svc.yaml": "..."}). */
export function tempProject(files: Record<string, string | Buffer> = {}): TempProject {
  const dir = mkdtempSync(join(tmpdir(), "svc-e2e-"));
  const p: TempProject = {
    dir,
    path: (name) => join(dir, name),
    write(name, content, mode) {
      const file = join(dir, name);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content, mode === undefined ? undefined : { mode });
      return file;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
  for (const [name, content] of Object.entries(files)) p.write(name, content);
  return p;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit, ms. */
  ms: number;
}

export interface RunOptions {
  cwd?: string;
  /** Added to a clean environment (PATH and HOME kept, SVC_* removed). */
  env?: Record<string, string | undefined>;
  input?: string;
  timeoutMs?: number;
}

/** Runs `node bin/svc.js ...args` to completion. */
export function runSvc(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return runBin(SVC_BIN, args, opts);
}

/** Runs `node bin/svcd.js ...args` to completion (for startup failures; use a daemon kit for long runs). */
export function runSvcd(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return runBin(SVCD_BIN, args, opts);
}

export function runBin(bin: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) {
    throw new Error("dist/ is not built: run `npm run build:ts` (npm test does it in pretest)");
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("SVC_")) env[k] = v;
  }
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: opts.cwd ?? ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 20_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        ms: performance.now() - started,
      });
    });
    child.stdin.end(opts.input ?? "");
  });
}

/** Lines of a stream's text, without the trailing empty one. */
export function lines(text: string): string[] {
  return text.split("\n").filter((l, i, all) => !(l === "" && i === all.length - 1));
}

/** True when the text looks like a JavaScript stack trace or a Node crash report. */
export function hasStackTrace(text: string): boolean {
  return /^\s+at .+[(:]\d+/m.test(text) || /node:internal|Node\.js v\d+|Uncaught|TypeError:|ReferenceError:/.test(text);
}
