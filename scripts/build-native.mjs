#!/usr/bin/env node
// `npm install` (the package's install script) and `npm run build:native`:
// compiles src/executor/native/spawn.c (binding.gyp) into
// build/Release/svc_spawn.node with node-gyp, which npm provides to its
// scripts. svcd starts its jobs with it (posix_spawn: no copy of the daemon's
// memory per job, src/executor/posixSpawn.ts). Linux only. When it cannot be
// built the install goes on and svcd forks its jobs with child_process, as
// the warning says.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

if (process.platform !== "linux") process.exit(0);
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const r = spawnSync("node-gyp", ["rebuild"], { cwd: root, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
if (r.status !== 0) {
  const why = r.error ? r.error.message : (r.stderr || r.stdout).split("\n").filter((l) => /ERR!|error/.test(l)).slice(0, 5).join("\n");
  process.stderr.write(
    `svc: could not build the posix_spawn helper (build/Release/svc_spawn.node); svcd will start jobs with child_process (fork), ` +
      `which is slower the more memory the daemon has. To retry: npm run build:native\n${why}\n`,
  );
}
