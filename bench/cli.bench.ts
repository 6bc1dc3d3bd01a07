import { spawn } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUILD_DIR, ensureBuild, startDaemon } from "./helpers/daemon.js";
import { svcYaml, writeTempProject } from "./helpers/projectGen.js";
import { median, pct, sig, sleep } from "./helpers/stats.js";
import type { BenchResult, BenchSection } from "./types.js";

/**
 * `svc status` wall time on 1,000 jobs: the real client binary (built from
 * the working tree into the bench's private build), spawned the way a shell
 * spawns it, talking to a real `svcd` over the Unix socket, stdout a pipe.
 * Timed from spawn to exit, so Node's own start-up is included; `node -e 0`
 * and `svc --version` are measured in the same run as the floors. 100 of the
 * jobs (and their `after:` successors) have run, so `last_run` is real.
 */

const JOBS = 1_000;
const RUNS = 30;
const WARMUP = 3;
const TARGET_MS = 300;

const SVC_ENTRY = join(BUILD_DIR, "svc.mjs");

function wall(args: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
    let err = "";
    child.stdout.resume();
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - t0;
      if (code !== 0) reject(new Error(`${args.join(" ")} exited ${code}: ${err}`));
      else resolve(ms);
    });
  });
}

/**
 * Each round runs every command once, in turn: on a shared, noisy machine a
 * burst of load then hits all of them alike, so their differences hold.
 */
async function rounds(commands: string[][], cwd: string): Promise<number[][]> {
  const out = commands.map(() => [] as number[]);
  for (let round = 0; round < WARMUP + RUNS; round++) {
    for (const [i, args] of commands.entries()) {
      const ms = await wall(args, cwd);
      if (round >= WARMUP) out[i]!.push(ms);
    }
  }
  return out;
}

export default async function cliBench(): Promise<BenchSection> {
  ensureBuild();
  writeFileSync(SVC_ENTRY, `import { main } from "./dist/cli/main.js";\nmain(process.argv.slice(2));\n`);
  const dir = writeTempProject(svcYaml(JOBS), undefined, "svc-cli-bench-");
  writeFileSync(join(dir, "step.sh"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  const daemon = await startDaemon(dir);
  try {
    if (!existsSync(join(dir, ".svc", "svcd.sock"))) throw new Error("svcd did not bind its Unix socket");
    const width = String(JOBS).length;
    for (let i = 10; i <= JOBS; i += 10) await daemon.post(`/api/jobs/job-${String(i).padStart(width, "0")}/run`);
    for (let waited = 0; waited < 60_000; waited += 250) {
      const s = await daemon.get<{ jobs: { running: number } }>("/api/status");
      if (s.body.jobs.running === 0 && waited > 1_000) break;
      await sleep(250);
    }

    const [nodeFloor, version, status, statusJson] = (await rounds(
      [["-e", "0"], [SVC_ENTRY, "--version"], [SVC_ENTRY, "status"], [SVC_ENTRY, "status", "--json"]],
      dir,
    )) as [number[], number[], number[], number[]];

    const row = (name: string, xs: number[], target?: boolean): BenchResult[] => [
      {
        name: `${name}, median`,
        value: sig(median(xs)),
        unit: "ms",
        ...(target ? { target: `< ${TARGET_MS} ms`, ok: median(xs) < TARGET_MS } : {}),
      },
      {
        name: `${name}, p99`,
        value: sig(pct(xs, 99)),
        unit: "ms",
        ...(target ? { target: `< ${TARGET_MS} ms`, ok: pct(xs, 99) < TARGET_MS } : {}),
        notes: `${RUNS} runs after ${WARMUP} warm-up, interleaved`,
      },
    ];
    return {
      title: "CLI: svc status on 1,000 jobs",
      method:
        `${RUNS} rounds (after ${WARMUP} warm-up) of sequential spawns of \`node svc.mjs status\` (the client build of this tree) in a project of ${JOBS} jobs ` +
        "served by a real svcd over <data>/svcd.sock; wall time from spawn to exit (Node start-up included), stdout a pipe (no colour). " +
        "Each round also runs the floors `node -e 0` and `svc --version`, interleaved, so load bursts hit all alike.",
      results: [
        ...row("svc status (table)", status, true),
        ...row("svc status --json", statusJson, true),
        ...row("svc --version (CLI start-up floor)", version),
        ...row("node -e 0 (Node start-up floor)", nodeFloor),
        {
          name: "svc status over svc --version, median of per-round differences",
          value: sig(median(status.map((ms, i) => ms - version[i]!))),
          unit: "ms",
          notes: "what status adds to the CLI's start-up: the request, /api/jobs for 1,000 jobs, the table",
        },
        {
          name: "svc status / node -e 0, median of per-round ratios",
          value: sig(median(status.map((ms, i) => ms / nodeFloor[i]!))),
          unit: "ratio",
          notes: "load-independent view: the wall-time target assumes an idle machine where node -e 0 takes about 40 ms",
        },
      ],
    };
  } finally {
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
