/**
 * A newcomer's first minutes, from the package as npm would serve it:
 * `npm pack` of this checkout (prepare builds it), `npm install -g
 * --prefix <temp>` of the tarball (which
 * compiles better-sqlite3 and svc's posix_spawn binding from source, as on a
 * user's machine), then `svc validate`, `svc start`, `svc run --wait` and
 * `svc stop` in a fresh project directory, every command from the installed
 * copy. Run by `npm run test:install` (CI runs it after `npm test`).
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..", "..");

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Result> {
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

describe("a newcomer installs the packed package and runs a project", () => {
  let tmp: string;
  let prefix: string;
  let tarball: string;
  let installLog: Result;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    tmp = realpathSync(mkdtempSync(join(tmpdir(), "svc-newcomer-")));
    prefix = join(tmp, "prefix");
    // A user's environment: the installed bin first, then node, then the system; no SVC_* variables.
    env = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SVC_") && !k.startsWith("npm_")) env[k] = v;
    env.PATH = `${join(prefix, "bin")}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`;
  }, 60_000);
  afterAll(async () => {
    if (!tmp) return;
    // A daemon left by a failed step: stop it by its pid.
    const pidFile = join(tmp, "project", ".svc", "svcd.pid");
    if (existsSync(pidFile)) {
      try {
        process.kill(Number(readFileSync(pidFile, "utf8").trim()), "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(tmp, { recursive: true, force: true });
  });

  it("npm pack makes a tarball with the build, the launchers, the native sources and the schemas", async () => {
    const r = await run("npm", ["pack", "--pack-destination", tmp], { cwd: ROOT, env: { ...process.env }, timeoutMs: 10 * 60_000 });
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const name = readdirSync(tmp).find((f) => f.endsWith(".tgz"));
    expect(name).toBeDefined();
    tarball = join(tmp, name!);
    const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n");
    for (const f of ["package/bin/svc.js", "package/bin/svcd", "package/dist/bundle/svcd.mjs", "package/dist/cli/main.js", "package/binding.gyp", "package/scripts/build-native.mjs", "package/schemas/svc.schema.json"]) {
      expect(files, f).toContain(f);
    }
    expect(files.some((f) => f.startsWith("package/dist/web/"))).toBe(true); // the dashboard
    expect(files.some((f) => f.includes(".test."))).toBe(false);
  }, 10 * 60_000);

  it("npm install -g of the tarball builds the native modules, with dependencies that run on this Node", async () => {
    expect(tarball).toBeDefined();
    mkdirSync(prefix);
    const t0 = Date.now();
    installLog = await run("npm", ["install", "-g", "--prefix", prefix, tarball], { cwd: tmp, env, timeoutMs: 15 * 60_000 });
    console.log(`npm install -g of the tarball took ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    expect(installLog.code, installLog.stderr.slice(-3000)).toBe(0);
    // A global install resolves dependencies afresh (no lock file, no overrides): none may need another Node.
    expect(installLog.stderr).not.toContain("EBADENGINE");
    const pkg = join(prefix, "lib", "node_modules", "svc");
    expect(existsSync(join(pkg, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node"))).toBe(true);
    expect(existsSync(join(pkg, "build", "Release", "svc_spawn.node"))).toBe(true);
    expect(realpathSync(join(prefix, "bin", "svc"))).toBe(join(pkg, "bin", "svc.js"));
  }, 15 * 60_000);

  it("the installed svc validates, starts, runs and stops a fresh project", async () => {
    expect(installLog?.code).toBe(0);
    const dir = join(tmp, "project");
    mkdirSync(dir);
    writeFileSync(join(dir, "svc.yaml"), 'jobs:\n  hello:\n    description: the first job\n    command: "echo hello from the installed svc"\n');
    const svc = (args: string[]) => run(join(prefix, "bin", "svc"), args, { cwd: dir, env, timeoutMs: 60_000 });

    const validate = await svc(["validate"]);
    expect(validate.code, validate.stderr).toBe(0);
    expect(validate.stdout).toContain("ok (1 job");

    const start = await svc(["start"]);
    expect(start.code, start.stderr).toBe(0);
    expect(start.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\n$/);
    // The daemon is the installed copy's, with the binding the install compiled.
    const pid = Number(readFileSync(join(dir, ".svc", "svcd.pid"), "utf8").trim());
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    expect(cmdline.some((a) => a.startsWith(join(prefix, "lib", "node_modules", "svc")))).toBe(true);

    const runOut = await svc(["run", "hello", "--wait"]);
    expect(runOut.code, runOut.stderr).toBe(0);
    expect(runOut.stdout).toContain("hello from the installed svc");

    const stop = await svc(["stop"]);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toContain(`stopped the daemon (pid ${pid})`);
    expect(readFileSync(join(dir, ".svc", "svcd.out"), "utf8")).toContain('"spawn":"posix_spawn"');
  }, 120_000);
});
