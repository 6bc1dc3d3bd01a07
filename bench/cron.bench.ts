/**
 * Side by side with Debian's cron (issue 11): the same 50 jobs due at one
 * minute, run by cron (foreground `cron -f`, the benchmark's own file in
 * /etc/cron.d) and by a real svcd, each with 1,000 other scheduled entries;
 * and the raw floor of a Node process spawning the same 50 commands at once.
 * Both schedulers' own CPU and memory while idle are sampled from /proc.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUILD_DIR, cpuMs, memMb, startDaemon, type Daemon } from "./helpers/daemon.js";
import { idleJobsYaml, utcHHMM } from "./helpers/projectGen.js";
import { rawBurstInFreshNode } from "./helpers/raw.js";
import { describe, median, pct, quick, round, sig, sleep, sleepUntil } from "./helpers/stats.js";
import type { BenchResult, BenchSection } from "./types.js";

const JOBS = 50;
const IDLE_ENTRIES = 1_000;
const CRON_FILE = "/etc/cron.d/svc-bench";
const MINUTE = 60_000;
/**
 * Whether Debian's stock /etc/crontab runs real work at this minute: cron.daily, weekly and monthly at 6:25,
 * 6:47 and 6:52 local time (apt, dpkg, man-db). Its :17 cron.hourly is run-parts of an empty directory.
 */
const stockMinute = (d: Date): boolean => d.getHours() === 6 && [25, 47, 52].includes(d.getMinutes());

function which(bin: string): string | null {
  for (const dir of (process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin").split(":").concat(["/usr/sbin", "/sbin"])) {
    if (existsSync(join(dir, bin))) return join(dir, bin);
  }
  return null;
}

/** cron's path, installing Debian's package when it is missing and we may; null with the reason otherwise. */
function ensureCron(): { path: string } | { skip: string } {
  const found = which("cron");
  if (found) return { path: found };
  if (process.getuid?.() !== 0) return { skip: "cron is not installed and this is not root (apt-get install cron needs root)" };
  try {
    execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "cron"], {
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 180_000,
    });
  } catch (e) {
    return { skip: `apt-get install cron failed: ${(e as Error).message.split("\n")[0]}` };
  }
  const path = which("cron");
  return path ? { path } : { skip: "apt-get install cron did not provide /usr/sbin/cron" };
}

function pidOf(name: string): number | null {
  try {
    const out = execFileSync("pgrep", ["-x", name], { stdio: ["ignore", "pipe", "ignore"] }).toString().trim();
    return out ? Number(out.split("\n")[0]) : null;
  } catch {
    return null;
  }
}

/** Delays (ms) of the `date +%s.%N` stamps in `file` after the instant `at`. */
function stampDelays(file: string, at: number): number[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => /^\d+\.\d+$/.test(l))
    .map((l) => {
      const [s, ns] = l.split(".");
      return Number(s) * 1_000 + Number(ns!.slice(0, 6)) / 1_000 - at;
    })
    .sort((a, b) => a - b);
}

/**
 * The first `count` minute boundaries at least `leadMs` away, the first `clean` of them clear of the stock
 * crontab's busy minutes (cron's own minute, and its idle minute after it); svc's figure is the median of its
 * minutes, so one busy minute among them does not decide it.
 */
function pickMinutes(leadMs: number, count: number, clean: number): number[] {
  let m = Math.ceil((Date.now() + leadMs) / MINUTE) * MINUTE;
  while (Array.from({ length: clean }, (_, i) => new Date(m + i * MINUTE)).some(stockMinute)) m += MINUTE;
  return Array.from({ length: count }, (_, i) => m + i * MINUTE);
}

interface Sample {
  t: number;
  cron: number | null;
  svcd: number | null;
}

/** CPU % of one core between the samples nearest to `from` and `to`. */
function cpuPct(samples: Sample[], who: "cron" | "svcd", from: number, to: number): number {
  const inWin = samples.filter((s) => s.t >= from && s.t <= to && s[who] !== null);
  if (inWin.length < 2) return NaN;
  const a = inWin[0]!;
  const b = inWin[inWin.length - 1]!;
  return (100 * (b[who]! - a[who]!)) / (b.t - a.t);
}

export default async function cronBench(): Promise<BenchSection> {
  const q = quick();
  const title = "Side by side with Debian's cron";
  const cron = ensureCron();
  if ("skip" in cron) {
    return { title, method: `Skipped: ${cron.skip}. Install Debian's cron (apt-get install cron) and run \`npm run bench -- cron\`.`, results: [] };
  }
  // One minute after its jobs for cron, the wait before its first minute for svcd: npm run bench stays under 10 minutes.
  const idleMinutes = 1;
  // svc's p99 is the median of its minutes' p99s, as the floor's is the median of its rounds': one burst's p99 is its
  // slowest start, and a single hiccup of this shared machine would decide it.
  const svcMinutes = q ? 1 : 3;
  const work = mkdtempSync(join(tmpdir(), "svc-bench-cron-"));
  const cronOut = join(work, "cron.txt");
  const svcOuts = Array.from({ length: svcMinutes }, (_, k) => join(work, `svc-${k}.txt`));
  // cron's jobs at minute M, svc's at the next ones: they never compete for the CPU at their instant.
  // 20 s is enough for the floor rounds, and cron reads /etc/cron.d again at each minute's wake-up.
  const [m, ...svcAts] = pickMinutes(20_000, svcMinutes + 1, 2) as [number, ...number[]];
  const svcAt = svcAts[0]!;
  const end = svcAts[svcAts.length - 1]! + 5_000;

  let cronProc: ChildProcess | null = null;
  let daemon: Daemon | null = null;
  const samples: Sample[] = [];
  let sampling = true;
  try {
    // ---- cron: its own file in /etc/cron.d, 1,000 idle entries + 50 due at M ----
    const idle = idleJobsYaml(IDLE_ENTRIES); // the same instants as svcd's idle jobs, read back from the YAML
    const idleCron = [...idle.matchAll(/time: "(\d\d)(\d\d)"/g)].map(([, h, mm]) => `${Number(mm)} ${Number(h)} * * * root /bin/true`);
    while (idleCron.length < IDLE_ENTRIES) idleCron.push(`${idleCron.length % 60} ${(new Date().getUTCHours() + 12) % 24} * * * root /bin/true`);
    const md = new Date(m);
    const due = Array.from({ length: JOBS }, () => `${md.getUTCMinutes()} ${md.getUTCHours()} * * * root date +\\%s.\\%N >> ${cronOut}`);
    writeFileSync(CRON_FILE, `SHELL=/bin/sh\nPATH=/usr/local/sbin:/usr/local/bin:/sbin:/bin:/usr/sbin:/usr/bin\n${[...idleCron, ...due].join("\n")}\n`, { mode: 0o644 });
    let cronPid = pidOf("cron");
    const ownCron = cronPid === null;
    if (ownCron) {
      cronProc = spawn(cron.path, ["-f"], { stdio: "ignore" });
      cronPid = cronProc.pid!;
    }

    // ---- svcd: 50 jobs due at each of its minutes, and idle jobs up to the same 1,050 as cron's ----
    const dir = join(work, "project");
    const dueJobs = (k: number, schedule: string): string =>
      Array.from({ length: JOBS }, (_, i) => `  at${k}-${String(i).padStart(2, "0")}:\n    command: date +%s.%N >> ${svcOuts[k]}\n    ${schedule}\n    concurrency: allow\n`).join("");
    const svcIdle = idleJobsYaml(IDLE_ENTRIES - (svcMinutes - 1) * JOBS);
    const svcDue = (schedule: (k: number) => string): string => svcOuts.map((_, k) => dueJobs(k, schedule(k))).join("");
    const svcdYaml = `executor:\n  pool_size: ${JOBS}\nscheduler:\n  max_concurrent_jobs: 64\n`;
    execFileSync("mkdir", ["-p", dir]);
    writeFileSync(join(dir, "svc.yaml"), `defaults:\n  timezone: UTC\njobs:\n${svcIdle}${svcDue((k) => `frequency: daily\n    time: "${utcHHMM(svcAts[k]!)}"`)}`);
    writeFileSync(join(dir, "svcd.yaml"), svcdYaml);
    daemon = await startDaemon(dir);
    const svcdPid = daemon.pid;
    const svcdReady = Date.now();

    const sampler = (async () => {
      while (sampling) {
        samples.push({ t: Date.now(), cron: cpuMs(cronPid!), svcd: cpuMs(svcdPid) });
        await sleep(1_000 - (Date.now() % 1_000) + 500); // at :xx.5, away from both schedulers' wake-ups
      }
    })();

    // ---- the raw floor: the same 50 shell commands spawned at once, while both schedulers wait ----
    const rawFile = join(work, "raw.txt");
    const rawRounds: number[][] = [];
    // The same processes as svcd starts: its environment (this process's, which it inherits) and the SVC_* variables.
    const jobEnv: Record<string, string> = { SVC_JOB: "at-00", SVC_RUN_ID: "1051", SVC_CYCLE_ID: randomUUID(), SVC_ATTEMPT: "1", SVC_TRIGGER: "schedule" };
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) jobEnv[k] ??= v;
    // svcd starts its jobs with posix_spawn where it can (src/executor/posixSpawn.ts): the same burst that way too,
    // from a fresh process that loads that one module, reported beside the target's child_process floor.
    const posixModule = join(BUILD_DIR, "dist", "executor", "posixSpawn.js");
    const posixRounds: number[][] = [];
    let posixNote = "";
    const floorRound = async (): Promise<void> => {
      rmSync(rawFile, { force: true });
      const { target } = await rawBurstInFreshNode(JOBS, ["/bin/sh", "-c", `date +%s.%N >> ${rawFile}`], jobEnv);
      rawRounds.push(stampDelays(rawFile, target));
      if (posixNote) return;
      rmSync(rawFile, { force: true });
      try {
        const { target: t } = await rawBurstInFreshNode(JOBS, ["/bin/sh", "-c", `date +%s.%N >> ${rawFile}`], jobEnv, posixModule);
        posixRounds.push(stampDelays(rawFile, t));
      } catch (e) {
        posixNote = (e as Error).message.split("\n").find((l) => l.includes("Error")) ?? (e as Error).message.split("\n")[0]!;
      }
    };
    for (let r = 0; r < 3 && Date.now() < m - 8_000; r++) {
      await floorRound();
      await sleep(500);
    }
    const cronMem = { before: memMb(cronPid!)?.rss ?? NaN };
    const svcdMemBefore = memMb(svcdPid)?.rss ?? NaN;

    // One more floor round between svc's minutes: the floor spans the same stretch of this machine's time as svc.
    for (const at of svcAts.slice(0, -1)) {
      await sleepUntil(at + 15_000);
      await floorRound();
    }
    await sleepUntil(end);
    sampling = false;
    await sampler;
    const cronRss = memMb(cronPid!)?.rss ?? NaN;
    const svcdRss = memMb(svcdPid)?.rss ?? NaN;

    // ---- results ----
    const cronD = stampDelays(cronOut, m);
    const svcDs = svcOuts.map((f, k) => stampDelays(f, svcAts[k]!));
    const svcD = svcDs.flat().sort((a, b) => a - b);
    const rawP99s = rawRounds.map((d) => pct(d, 99));
    const rawP99 = median(rawP99s);
    const rawAll = rawRounds.flat();
    const posixP99s = posixRounds.map((d) => pct(d, 99));
    const posixP99 = posixRounds.length > 0 ? median(posixP99s) : NaN;
    const cronP99 = pct(cronD, 99);
    const svcP99s = svcDs.map((d) => pct(d, 99));
    const svcP99 = median(svcP99s);
    if (cronD.length !== JOBS || svcDs.some((d) => d.length !== JOBS)) {
      throw new Error(`cron bench: expected ${JOBS} stamps each, got cron ${cronD.length}, svc ${svcDs.map((d) => d.length).join(", ")} (${work})`);
    }
    const cronIdle: number[] = [];
    const svcdIdle: number[] = [];
    for (let k = 0; k < idleMinutes; k++) cronIdle.push(cpuPct(samples, "cron", m + 5_000 + k * MINUTE, m + 5_000 + (k + 1) * MINUTE));
    svcdIdle.push(cpuPct(samples, "svcd", svcdReady + 3_000, svcAt - 2_000));
    if (idleMinutes > 1) svcdIdle.push(cpuPct(samples, "svcd", svcAt + 5_000, end));

    const results: BenchResult[] = [
      { name: "cron: delay after the minute, 50 jobs: median", value: Math.round(median(cronD)), unit: "ms", notes: describe(cronD, " ms") },
      { name: "cron: delay after the minute, 50 jobs: p99", value: Math.round(cronP99), unit: "ms" },
      { name: "svc: delay after the minute, 50 jobs: median", value: sig(median(svcD)), unit: "ms", notes: `all ${svcMinutes} minutes' starts: ${describe(svcD, " ms")}` },
      {
        name: "svc: delay after the minute, 50 jobs: p99",
        value: sig(svcP99),
        unit: "ms",
        notes: `median of ${svcMinutes} minutes' p99 (${svcP99s.map((x) => sig(x)).join(", ")} ms; the first is svcd's first dispatch since it started)`,
      },
      {
        name: "raw floor: 50 `sh -c date` spawned at once: p99",
        value: sig(rawP99),
        unit: "ms",
        notes: `child_process.spawn (fork); median of ${rawRounds.length} rounds' p99 (${rawP99s.map((x) => sig(x)).join(", ")} ms); all starts ${describe(rawAll, " ms")}`,
      },
      ...(posixRounds.length === 0
        ? []
        : [
            {
              name: "raw floor with posix_spawn: p99",
              value: sig(posixP99),
              unit: "ms",
              notes: `the same bursts through svc's posixSpawn; median of ${posixRounds.length} rounds' p99 (${posixP99s.map((x) => sig(x)).join(", ")} ms); all starts ${describe(posixRounds.flat(), " ms")}`,
            },
          ]),
      { name: "cron p99 / svc p99", value: round(cronP99 / svcP99, 1), unit: "ratio", target: ">= 10x", ok: cronP99 / svcP99 >= 10 },
      {
        name: "svc p99 / raw floor p99",
        value: round(svcP99 / rawP99, 2),
        unit: "ratio",
        target: "<= 1.25x",
        ok: svcP99 / rawP99 <= 1.25,
        notes: `the child_process floor, the raw spawn issue 11 names${posixRounds.length > 0 ? "" : `; posix_spawn floor not measured${posixNote ? `: ${posixNote}` : ""}`}`,
      },
      ...(posixRounds.length === 0
        ? []
        : [{ name: "svc p99 / posix_spawn floor p99", value: round(svcP99 / posixP99, 2), unit: "ratio", notes: "svc's own way of spawning, from a fresh process" }]),
      {
        name: `cron idle CPU, ${IDLE_ENTRIES + JOBS} entries`,
        value: round(median(cronIdle), 3),
        unit: "% core",
        notes: `per minute: ${cronIdle.map((x) => round(x, 3)).join(", ")} %`,
      },
      {
        name: `svcd idle CPU, ${IDLE_ENTRIES + JOBS} jobs`,
        value: round(median(svcdIdle), 3),
        unit: "% core",
        target: "< 1 %",
        ok: median(svcdIdle) < 1,
        notes: `windows of ${svcdIdle.length === 1 ? "" : "about "}${Math.round((svcAt - 2_000 - svcdReady - 3_000) / 1_000)} s${idleMinutes > 1 ? " and 60 s" : ""}: ${svcdIdle.map((x) => round(x, 3)).join(", ")} %`,
      },
      { name: "cron RSS", value: round(cronRss, 1), unit: "MB", notes: `${round(cronMem.before, 1)} MB before its jobs ran` },
      { name: "svcd RSS", value: round(svcdRss, 1), unit: "MB", notes: `${round(svcdMemBefore, 1)} MB before its jobs ran` },
    ];
    return {
      title,
      method:
        `${JOBS} jobs each running \`date +%s.%N >> file\` through /bin/sh, due at one minute: Debian's cron (\`cron -f\`${ownCron ? ", started by the benchmark" : ", already running"}; ` +
        `its own ${CRON_FILE} with ${IDLE_ENTRIES} other entries) at minute M, and a real svcd (${IDLE_ENTRIES + JOBS} jobs too: ${JOBS} \`daily\` ` +
        `jobs in UTC due at each of the ${svcMinutes > 1 ? `${svcMinutes} minutes` : "minute"} after M, the rest idle; M and M+1 clear of the stock crontab's cron.daily/weekly/monthly minutes; executor.pool_size ${JOBS}; started through bin/svcd, the launcher users run), ` +
        `so the two never compete for the CPU at their instant. svc's p99 is the median of its ${svcMinutes} minutes' p99s. Delay = the stamp ` +
        "written by date minus the minute boundary. Raw floor: a fresh, minimal Node process (no modules: fork cost grows with the parent's " +
        `memory) sleeps to a whole second with setTimeout and spawns the same ${JOBS} \`sh -c\` commands at once (pipes, detached, ` +
        `svcd's environment and the SVC_* variables: the same processes), ` +
        "each round twice: with child_process.spawn (fork; the target's floor) and with svc's own posixSpawn (posix_spawn, how svcd starts jobs " +
        "on Linux; reported beside it); " +
        `${q ? "up to 3" : "3"} rounds before M${svcMinutes > 1 ? " and one between each two of svc's minutes" : ""}, the median of the rounds' p99s. ` +
        "Idle CPU: user+system " +
        "time of the scheduler's own process (not its children) from /proc/<pid>/stat sampled every second; cron over each minute " +
        "after its jobs ran (each includes its once-a-minute wake-up), svcd from startup +3 s to 2 s before its minute" +
        `${idleMinutes > 1 ? " and over the minute after it" : ""}. RSS is VmRSS at the end.`,
      results,
    };
  } finally {
    sampling = false;
    await daemon?.stop();
    if (cronProc && cronProc.exitCode === null) {
      cronProc.kill("SIGTERM");
      await new Promise((r) => cronProc!.once("exit", r));
    }
    rmSync(CRON_FILE, { force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

// `tsx bench/cron.bench.ts` prints this section alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const section = await cronBench();
  console.log(section.title);
  for (const r of section.results) {
    console.log(`  ${r.name}: ${r.value} ${r.unit}${r.target ? ` (target ${r.target}: ${r.ok ? "ok" : "MISSED"})` : ""}  ${r.notes ?? ""}`);
  }
}
