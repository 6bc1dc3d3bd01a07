/**
 * The one setting svcd needs before its process starts: one malloc arena.
 *
 * glibc gives each thread that allocates its own malloc arena (svcd's are
 * V8's and libuv's helper threads). With MALLOC_ARENA_MAX=1 svcd has less
 * private memory, and where jobs are forked (no posix_spawn:
 * src/executor/posixSpawn.ts) every fork copies less of it (figures:
 * docs/PERFORMANCE.md, Fixes, "Malloc arenas").
 * glibc reads the variable only when a process starts, and Node 20 cannot
 * re-exec itself, so svcd's launchers set it: `bin/svcd` (a shell script that
 * mirrors launcherEnv) and `svc daemon start`. A value of the user's own is
 * kept. What a launcher added is named in SVCD_LAUNCHER_ENV, and the daemon
 * removes it from its environment when it starts (dropLauncherEnv): jobs
 * inherit svcd's environment, and a job with threads of its own must not be
 * held to one arena.
 */
export const LAUNCHER_MARK = "SVCD_LAUNCHER_ENV";

const ADDED: Record<string, string> = { MALLOC_ARENA_MAX: "1" };

/** `env` plus what svcd's launchers add (the variables the user has not set). */
export function launcherEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const added = Object.keys(ADDED).filter((k) => env[k] === undefined);
  if (added.length === 0) return env;
  const out: NodeJS.ProcessEnv = { ...env, [LAUNCHER_MARK]: added.join(",") };
  for (const k of added) out[k] = ADDED[k];
  return out;
}

/** Removes from `env` what a launcher added (named in SVCD_LAUNCHER_ENV), and the mark itself. */
export function dropLauncherEnv(env: NodeJS.ProcessEnv = process.env): void {
  const mark = env[LAUNCHER_MARK];
  if (mark === undefined) return;
  for (const k of mark.split(",")) if (k in ADDED) delete env[k];
  delete env[LAUNCHER_MARK];
}
