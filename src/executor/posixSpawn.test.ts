import { once } from "node:events";
import { createRequire } from "node:module";
import { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { describeUnless, type Requirement } from "../../test/helpers/skip.js";
import { processStartTime } from "./liveness.js";
import { envAsOneString, posixSpawn, posixSpawnAsyncPromise, spawnMethod, testSeam, type SpawnedChild } from "./posixSpawn.js";

const dir = mkdtempSync(join(tmpdir(), "svc-pspawn-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ENV = { PATH: "/usr/bin:/bin" };

type Way = "posixSpawn" | "posixSpawnAsync";
type Opts = { cwd: string; env: Record<string, string | undefined> };

/** posixSpawn, or posixSpawnAsync (the kernel's part on a worker thread, how svcd starts jobs) as a promise. */
function start(way: Way, file: string, args: string[], opts: Opts): Promise<SpawnedChild | NodeJS.ErrnoException | null> {
  if (way === "posixSpawn") {
    try {
      return Promise.resolve(posixSpawn(file, args, opts));
    } catch (e) {
      return Promise.reject(e as Error);
    }
  }
  return posixSpawnAsyncPromise(file, args, opts);
}

async function run(way: Way, file: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}, listen?: (child: SpawnedChild) => void) {
  const child = await start(way, file, args, { cwd: opts.cwd ?? dir, env: opts.env ?? ENV });
  if (child === null || child instanceof Error) throw new Error(`not started: ${String(child)}`);
  listen?.(child);
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  // Listened for from the start: the pipes may close before or after the exit is reported.
  const closed = Promise.all([once(child.stdout, "close"), once(child.stderr, "close")]);
  const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
  await closed;
  return { child, code, signal, out, err };
}

describe("posixSpawn", () => {
  // On Linux the binding must be there: a build that failed in CI would otherwise pass unnoticed, on fork.
  it("is how jobs start on Linux", (ctx) => {
    ctx.skip(process.platform !== "linux", `jobs start with posix_spawn on Linux only (this is ${process.platform})`);
    ctx.skip(process.env.SVC_SPAWN === "fork", "SVC_SPAWN=fork: jobs are forked, the posix_spawn binding is not loaded");
    expect(spawnMethod).toBe("posix_spawn");
  });

  const binding: Requirement = {
    missing:
      spawnMethod === "posix_spawn"
        ? null
        : process.env.SVC_SPAWN === "fork"
          ? "SVC_SPAWN=fork: jobs are forked, the posix_spawn binding is not loaded"
          : "needs the posix_spawn binding: Linux only, built by npm install (npm run build:native)",
  };
  describeUnless(binding, "the child is the one child_process.spawn(detached, piped) gives", () => {
   describe.each(["posixSpawn", "posixSpawnAsync"] as const)("%s", (way) => {
    it("runs in its own session and process group, in cwd, with exactly the environment given, stdin /dev/null", async () => {
      const r = await run(way, "/bin/sh", ["-c", 'echo "$$ $(cut -d" " -f5,6 /proc/$$/stat)"; pwd; env | sort; cat; echo err >&2; exit 3'], { env: { ...ENV, A: "1 2" } });
      const [pid, pgrp, session] = r.out.split("\n")[0]!.split(" ").map(Number);
      expect(pid).toBe(r.child.pid);
      expect(pgrp).toBe(pid);
      expect(session).toBe(pid);
      expect(r.out.split("\n").slice(1)).toEqual([dir, "A=1 2", `PATH=${ENV.PATH}`, `PWD=${dir}`, ""]);
      expect(r.err).toBe("err\n");
      expect([r.code, r.signal]).toEqual([3, null]);
    });

    it("passes the environment exactly, as one NUL-joined string: none, one, and values with UTF-8, '=' and nothing", async () => {
      expect(envAsOneString).toBe(true); // this build's binding takes it (an older one gets the array)
      expect((await run(way, "/usr/bin/env", [], { env: {} })).out).toBe("");
      expect((await run(way, "/usr/bin/env", [], { env: { ONLY: "1" } })).out).toBe("ONLY=1\n");
      const env = { PATH: ENV.PATH, "VÄR": "größe ✓ 🚀", EQ: "a=b=c", EMPTY: "", LAST: "z" };
      const r = await run(way, "/usr/bin/env", [], { env });
      expect(r.out).toBe(`${Object.entries(env).map(([k, v]) => `${k}=${v}`).join("\n")}\n`);
    });

    it("every signal at its default and none blocked: SIGPIPE ends a writer (svcd ignores it), a signal's name is reported", async () => {
      const status = await run(way, "/bin/grep", ["-E", "^Sig(Blk|Ign)", "/proc/self/status"]);
      const blocked = /SigBlk:\s+([0-9a-f]+)/.exec(status.out)![1]!;
      const ignored = BigInt(`0x${/SigIgn:\s+([0-9a-f]+)/.exec(status.out)![1]!}`);
      expect(BigInt(`0x${blocked}`)).toBe(0n);
      expect(ignored & ~(3n << 31n)).toBe(0n); // only glibc's internal signals 32 and 33
      const pipe = await run(way, "/bin/sh", ["-c", "yes | head -n 1"]);
      expect([pipe.out, pipe.err, pipe.code]).toEqual(["y\n", "", 0]);
      const killed = await run(way, "/bin/sh", ["-c", "kill -TERM $$; sleep 5"]);
      expect([killed.code, killed.signal]).toEqual([null, "SIGTERM"]);
    });

    it("looks a bare command up in the job's PATH, not svcd's", async () => {
      const r = await run(way, "true", [], { env: { PATH: "/nonexistent:/bin" } });
      expect(r.code).toBe(0);
      const missing = await start(way, "true", [], { cwd: dir, env: { PATH: "/nonexistent" } });
      expect((missing as NodeJS.ErrnoException).code).toBe("ENOENT");
    });

    it("runs an executable without a #! line with /bin/sh, as execvp does", async () => {
      writeFileSync(join(dir, "plain"), 'echo "plain $1"\n', { mode: 0o755 });
      const r = await run(way, "./plain", ["arg"]);
      expect([r.out, r.code]).toEqual(["plain arg\n", 0]);
    });

    it("says why a process could not start: no such command, a missing working directory, a NUL byte", async () => {
      expect(((await start(way, "no-such-command-svc", [], { cwd: dir, env: ENV })) as NodeJS.ErrnoException).code).toBe("ENOENT");
      expect(((await start(way, "/bin/true", [], { cwd: join(dir, "nope"), env: ENV })) as NodeJS.ErrnoException).code).toBe("ENOENT");
      await expect(start(way, "/bin/echo", ["a\0b"], { cwd: dir, env: ENV })).rejects.toThrow(/null bytes \(an argument of the command has one\)$/);
      // Where, never the value: an environment value may be a secret.
      const err = await start(way, "/bin/true", [], { cwd: dir, env: { ...ENV, API_KEY: "hunter2\0x" } }).catch((e: unknown) => e as Error);
      expect((err as Error).message).toBe("spawn: strings may not contain null bytes (the environment variable API_KEY has one)");
    });

    it("gives each child's start time as /proc/<pid>/stat has it, or null (then read /proc)", async () => {
      let given = 0;
      for (let i = 0; i < 20; i++) {
        const child = (await start(way, "/bin/sleep", ["0.2"], { cwd: dir, env: ENV })) as SpawnedChild;
        const closed = Promise.all([once(child.stdout, "close"), once(child.stderr, "close")]);
        // Read while it runs (sleep 0.2): /proc still has it.
        const read = processStartTime(child.pid);
        expect(read).not.toBeNull();
        if (child.startTime !== null) {
          given++;
          expect(child.startTime).toBe(read);
        }
        process.kill(child.pid, "SIGKILL");
        await once(child, "exit");
        await closed;
      }
      // Null only when the spawn straddled a clock tick (10 ms) or the binding predates it.
      expect(given).toBeGreaterThan(10);
    });

    it("reports each of many children's exit once, each to its own child", async () => {
      // Each exit listened for as soon as its child exists (the exit is reported a turn later at the earliest).
      const codes = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const c = (await start(way, "/bin/sh", ["-c", `exit ${i}`], { cwd: dir, env: ENV })) as SpawnedChild;
          return ((await once(c, "exit")) as [number])[0];
        }),
      );
      expect(codes).toEqual(Array.from({ length: 20 }, (_, i) => i));
    });

    it("when polling the pidfd fails, the process group is killed at once and the exit says why; the next watch works", async () => {
      expect(testSeam.failNextExitWatch()).toBe(true);
      // A leader and a grandchild in its group that would each run for a minute.
      const child = (await start(way, "/bin/sh", ["-c", "sleep 60 & sleep 60"], { cwd: dir, env: ENV })) as SpawnedChild;
      const [code, signal, watchError] = (await once(child, "exit")) as [number | null, string | null, string | undefined];
      expect([code, signal]).toEqual([null, "SIGKILL"]);
      expect(watchError).toBe("svcd lost track of the process (polling its pidfd failed: EBADF), so it killed its process group (SIGKILL) rather than leave it running unwatched");
      // The grandchild got SIGKILL too; it is gone once its new parent has reaped it.
      const groupGone = () => {
        try {
          process.kill(-child.pid, 0);
          return false;
        } catch (e) {
          return (e as NodeJS.ErrnoException).code === "ESRCH";
        }
      };
      await expect.poll(groupGone, { timeout: 5_000, message: "nothing of its group is left" }).toBe(true);

      const next = await run(way, "/bin/sh", ["-c", "sleep 0.2; exit 4"]);
      expect([next.code, next.signal]).toEqual([4, null]);
    });
   });

    it("the binding still takes the environment as an array of K=V strings (what a binding built before envBlock is given)", async () => {
      const b = createRequire(import.meta.url)(fileURLToPath(new URL("../../build/Release/svc_spawn.node", import.meta.url))) as {
        spawn(file: string, argv: string[], envp: string[], cwd: string, onExit: (code: number | null) => void): [number, number, number] | number;
      };
      let onExit!: (code: number | null) => void;
      const exited = new Promise<number | null>((resolve) => (onExit = resolve));
      const r = b.spawn("/usr/bin/env", ["/usr/bin/env"], ["A=1", "VÄR=größe ✓", "EQ=a=b"], dir, onExit);
      if (typeof r === "number") throw new Error(`spawn failed: errno ${-r}`);
      const out = new Socket({ fd: r[1], readable: true, writable: false });
      new Socket({ fd: r[2], readable: true, writable: false }).resume();
      let text = "";
      out.on("data", (c: Buffer) => (text += c.toString()));
      await Promise.all([once(out, "close"), exited.then((code) => expect(code).toBe(0))]);
      expect(text).toBe("A=1\nVÄR=größe ✓\nEQ=a=b\n");
    });

    describe("its pipes, read by the binding (NativePipe) or by net.Sockets (forced here: what a binding built before readPipe gives)", () => {
      const seq = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join("");
      afterEach(() => void testSeam.socketPipes(false));

      it.each([false, true])("gives every byte of both streams in order (net.Sockets: %s)", async (sockets) => {
        expect(testSeam.socketPipes(sockets)).toBe(true);
        const order: string[] = [];
        const r = await run("posixSpawnAsync", "/bin/sh", ["-c", "seq 1 200000; seq 1 3000 >&2"], {}, (child) => {
          for (const e of ["end", "close"]) child.stdout.once(e, () => order.push(e));
        });
        expect(r.child.stdout instanceof Socket).toBe(sockets);
        expect(order).toEqual(["end", "close"]);
        expect([r.code, r.out.length, r.err]).toEqual([0, seq(200000).length, seq(3000)]);
        expect(r.out === seq(200000)).toBe(true);
      });

      it("pause holds the data back (the writer blocks on the full pipe) and resume delivers the rest, in order", async () => {
        const child = (await start("posixSpawnAsync", "/usr/bin/seq", ["1", "200000"], { cwd: dir, env: ENV })) as SpawnedChild;
        expect(child.stdout instanceof Socket).toBe(false);
        child.stderr.resume();
        let out = "";
        let exited = false;
        child.once("exit", () => (exited = true));
        const first = once(child.stdout, "data");
        child.stdout.on("data", (c: Buffer) => (out += c.toString()));
        await first;
        child.stdout.pause();
        const held = out.length;
        await new Promise((r) => setTimeout(r, 300));
        expect([out.length, exited]).toEqual([held, false]);
        const closed = once(child.stdout, "close");
        child.stdout.resume();
        await closed;
        expect(out === seq(200000)).toBe(true);
      });

      it("destroy closes the pipe: a writer still writing gets SIGPIPE, and 'close' follows", async () => {
        const child = (await start("posixSpawnAsync", "/usr/bin/yes", [], { cwd: dir, env: ENV })) as SpawnedChild;
        child.stderr.resume();
        const exit = once(child, "exit");
        const closed = once(child.stdout, "close");
        child.stdout.once("data", () => child.stdout.destroy()); // from within a handler, as startProcess's flood handling may
        await closed;
        expect(await exit).toEqual([null, "SIGPIPE", undefined]);
      });

      it("a pipe that cannot be read says so ('error' with the code) and closes, after the listeners of its turn's microtasks", async () => {
        // As startProcess has it: created in a callback (here a timer), listened to in a microtask of that turn.
        const events = await new Promise<unknown[]>((resolve) => {
          setTimeout(() => {
            const pipe = testSeam.readPipe(-1);
            const seen: unknown[] = [];
            queueMicrotask(() => {
              pipe.on("error", (e: NodeJS.ErrnoException) => seen.push([e.code, e.syscall]));
              pipe.on("close", () => resolve([...seen, "close"]));
            });
          }, 1);
        });
        expect(events).toEqual([["EBADF", "open"], "close"]);
      });
    });
  });
});
