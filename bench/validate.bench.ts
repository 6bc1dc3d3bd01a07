import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { loadProject } from "../src/config/index.js";
import type { BenchResult, BenchSection } from "./types.js";

/**
 * `svc validate` wall time on a generated 1,000-job svc.yaml (the built
 * binary, as a user runs it), against the floor of starting Node at all, and
 * the loader's in-process time at 1,000 and 10,000 jobs, against the `yaml`
 * package's own parse of the same text.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "bench", ".out", "validate");
const SVC = join(ROOT, "bin", "svc.js");
/** `npm run bench -- --quick` sets SVC_BENCH_QUICK: fewer repetitions. */
const QUICK = process.env.SVC_BENCH_QUICK === "1";
const RUNS = QUICK ? 9 : 21;
const TARGET_MS = 300;

const FREQS = ["hourly", "daily", "weekly", "monthly", "weekdays", "weekends", "manual"];
const ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney"];

/**
 * A generated project. `realistic`: every job has a description, command,
 * schedule and tags; some have notify entries, outputs, env, healthchecks,
 * SLAs and retries, as in real configs (~11 lines per job). `rich`: every
 * job uses every field family (~27 lines per job), a worst case.
 */
export function generateProject(jobs: number, shape: "realistic" | "rich" = "realistic"): string {
  const rich = shape === "rich";
  const out: string[] = [
    "defaults:",
    "  timezone: Europe/Berlin",
    "  retries: 2",
    "  timeout: 1h",
    "integrations:",
    '  ops-chat: {provider: chat, webhook_url: "https://chat.example/hooks/abc"}',
    "  pager: {routing_key: r-123}",
    "  smtp: {host: mail.example, from: svc@example.org, port: 587}",
    "jobs:",
  ];
  const every = (n: number, i: number) => rich || i % n === 0;
  for (let i = 0; i < jobs; i++) {
    const freq = FREQS[i % FREQS.length]!;
    out.push(`  job-${i}:`);
    out.push(`    description: "Job ${i}: moves batch ${i % 97} from staging to the warehouse"`);
    // every fifth job reads the row count of the job before it, so it depends on it
    const readsPrevious = i % 5 === 0 && i > 0;
    if (readsPrevious) out.push(`    command: ["./bin/etl", "--batch", "${i}", "--rows", "{{ outputs.job-${i - 1}.rows }}"]`);
    else out.push(`    command: ./scripts/step.sh ${i} --emit-rows`);
    if (i % 4 === 1) {
      out.push(`    frequency: after:job-${i - 1}`);
    } else {
      out.push(`    frequency: ${freq}`);
      if (!["hourly", "manual"].includes(freq)) out.push(`    time: "${String(i % 24).padStart(2, "0")}${String((i * 7) % 60).padStart(2, "0")}"`);
      if (freq === "weekly") out.push("    weekday: fri");
      if (freq === "monthly") out.push(`    day_of_month: ${(i % 28) + 1}`);
      if (every(2, i)) out.push(`    timezone: ${ZONES[i % ZONES.length]}`);
    }
    const deps = [...(i % 6 === 2 && i > 2 ? [`job-${i - 2}`] : []), ...(readsPrevious && i % 4 !== 1 ? [`job-${i - 1}`] : [])];
    if (deps.length > 0) out.push(`    depends_on: [${deps.join(", ")}]`);
    out.push(`    tags: [etl, team-${i % 9}, tier-${i % 3}]`);
    if (every(3, i)) out.push("    sla: 20m");
    if (every(4, i)) {
      out.push(`    retry_delay: ${i % 2 ? "exponential" : "fixed:30s"}`);
      out.push(`    concurrency: ${["forbid", "allow", "replace"][i % 3]}`);
    }
    if (every(5, i)) {
      out.push("    env:");
      out.push(`      BATCH: "${i}"`);
      out.push('      DB_URL: "${env:DB_URL}"');
    }
    if (every(4, i) || (i + 1) % 5 === 0) {
      out.push("    output:");
      out.push('      rows: "json_field:rows"');
    }
    if (every(6, i)) {
      out.push("    healthcheck:");
      out.push(`      command: test -s /tmp/job-${i}.done`);
      out.push("      timeout: 10s");
    }
    if (every(3, i)) {
      out.push("    notify:");
      out.push('      on_failure: ["ops-chat:#data", "pager:p2"]');
      if (rich || i % 2 === 0) out.push("      on_sla_breach: {channel: email:oncall@example.org, attach_logs: last_50_lines}");
    }
  }
  return out.join("\n") + "\n";
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.99 * s.length) - 1)]!;
}

/** CPU time (user + system, ms) of this process's reaped children, from /proc; null elsewhere. */
function childrenCpuMs(): number | null {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // cutime and cstime, in clock ticks (100 per second on Linux).
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return null;
  }
}

/** Runs node with `args` `runs` times; wall times, and the children's CPU times where /proc has them. */
function wall(args: string[], runs: number, cpu: number[] = []): number[] {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c0 = childrenCpuMs();
    const t = performance.now();
    const r = spawnSync(process.execPath, args, { cwd: OUT, stdio: ["ignore", "pipe", "pipe"] });
    times.push(performance.now() - t);
    const c1 = childrenCpuMs();
    if (c0 !== null && c1 !== null) cpu.push(c1 - c0);
    if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr.toString().slice(0, 500)}`);
  }
  return times;
}

/**
 * A preload that prints the main thread's CPU time (user + system, from
 * /proc/self/task/<pid>/stat) at exit: close to the wall time the same run
 * would take on an idle machine, and much less disturbed by other load.
 */
const MAIN_THREAD_HOOK = `import { readFileSync } from "node:fs";
process.on("exit", () => {
  try {
    const s = readFileSync("/proc/self/task/" + process.pid + "/stat", "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    process.stderr.write("main-thread-cpu-ms " + (Number(f[11]) + Number(f[12])) * 10 + "\\n");
  } catch {}
});
`;

function mainThreadCpu(args: string[], runs: number): number[] {
  const hook = join(OUT, "main-thread-cpu.mjs");
  writeFileSync(hook, MAIN_THREAD_HOOK);
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, ["--import", hook, ...args], { cwd: OUT, stdio: ["ignore", "pipe", "pipe"] });
    const m = /main-thread-cpu-ms (\d+)/.exec(r.stderr.toString());
    if (m) out.push(Number(m[1]));
  }
  return out;
}

function inProcess(file: string, runs: number): number[] {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const r = loadProject(file, { DB_URL: "postgres://x" });
    times.push(performance.now() - t);
    if (!r.ok) throw new Error(`generated config invalid: ${r.errors[0]?.message}`);
  }
  return times;
}

/** Builds dist/ when any src/ file is newer than the binary's entry point. */
function ensureBuilt(): string | null {
  const entry = join(ROOT, "dist", "cli", "main.js");
  let built = 0;
  try {
    built = statSync(entry).mtimeMs;
  } catch {
    built = 0;
  }
  const newest = (dir: string): number =>
    Math.max(
      0,
      ...readdirSync(dir, { withFileTypes: true }).map((d) =>
        d.isDirectory() ? (d.name === "web" ? 0 : newest(join(dir, d.name))) : statSync(join(dir, d.name)).mtimeMs,
      ),
    );
  if (built >= newest(join(ROOT, "src"))) return null;
  const r = spawnSync("npm", ["run", "build:ts"], { cwd: ROOT, stdio: "ignore" });
  return r.status === 0 ? "dist/ was rebuilt first" : "npm run build:ts reported errors (other folders); dist/ emitted anyway";
}

export default async function validateBench(): Promise<BenchSection> {
  mkdirSync(OUT, { recursive: true });
  const built = ensureBuilt();
  const small = join(OUT, "svc.yaml");
  const richFile = join(OUT, "svc-rich.yaml");
  const big = join(OUT, "svc-10000.yaml");
  const smallText = generateProject(1_000);
  const richText = generateProject(1_000, "rich");
  const bigText = generateProject(10_000);
  writeFileSync(small, smallText);
  writeFileSync(richFile, richText);
  writeFileSync(big, bigText);

  // Warm the file cache and the OS, then measure in interleaved rounds so
  // that load from other processes hits both series alike.
  wall([SVC, "-c", small, "validate"], 2);
  const nodeFloor: number[] = [];
  const validate: number[] = [];
  const nodeCpu: number[] = [];
  const validateCpu: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    nodeFloor.push(...wall(["-e", "0"], 1, nodeCpu));
    validate.push(...wall([SVC, "-c", small, "validate"], 1, validateCpu));
  }
  const mainValidate = mainThreadCpu([SVC, "-c", small, "validate"], QUICK ? 5 : 11);
  const mainVersion = mainThreadCpu([SVC, "--version"], QUICK ? 5 : 11);
  const mainNode = mainThreadCpu(["-e", "0"], QUICK ? 5 : 11);
  const validateRich = wall([SVC, "-c", richFile, "validate"], QUICK ? 3 : 7);
  const validateBig = wall([SVC, "-c", big, "validate"], QUICK ? 1 : 3);

  const load1k = inProcess(small, 7);
  const load10k = inProcess(big, 5);
  const yaml10k: number[] = [];
  for (let i = 0; i < 2; i++) {
    const t = performance.now();
    YAML.parse(bigText);
    yaml10k.push(performance.now() - t);
  }

  const vMed = median(validate);
  const results: BenchResult[] = [
    {
      name: "svc validate, 1,000 jobs: median wall time",
      value: vMed,
      unit: "ms",
      target: `< ${TARGET_MS} ms`,
      ok: vMed < TARGET_MS,
      notes: `${RUNS} runs; ${(smallText.length / 1024).toFixed(0)} KB file`,
    },
    { name: "svc validate, 1,000 jobs: p99 wall time", value: p99(validate), unit: "ms", notes: `max of ${RUNS} runs` },
    ...(validateCpu.length > 0
      ? [
          {
            name: "svc validate, 1,000 jobs: median CPU time",
            value: median(validateCpu),
            unit: "ms",
            notes: `user + system of the process, all threads (10 ms resolution); node -e 0: ${median(nodeCpu).toFixed(0)} ms. Less sensitive to other load than wall time.`,
          },
        ]
      : []),
    ...(mainValidate.length > 0
      ? [
          {
            name: "svc validate, 1,000 jobs: median main-thread CPU",
            value: median(mainValidate),
            unit: "ms",
            target: `< ${TARGET_MS} ms`,
            ok: median(mainValidate) < TARGET_MS,
            notes:
              `what the wall time is on an idle machine (10 ms resolution); node -e 0: ${median(mainNode).toFixed(0)} ms, ` +
              `svc --version (the CLI without the config loader): ${median(mainVersion).toFixed(0)} ms`,
          },
        ]
      : []),
    {
      name: "node -e 0: median wall time (floor)",
      value: median(nodeFloor),
      unit: "ms",
      notes: `validate costs ${(vMed - median(nodeFloor)).toFixed(0)} ms above starting Node`,
    },
    {
      name: "svc validate, 1,000 jobs using every field: median",
      value: median(validateRich),
      unit: "ms",
      notes: `${validateRich.length} runs; ${(richText.length / 1024).toFixed(0)} KB file (worst case)`,
    },
    {
      name: "svc validate, 10,000 jobs: median wall time",
      value: median(validateBig),
      unit: "ms",
      notes: `${validateBig.length} run(s); ${(bigText.length / 1024 / 1024).toFixed(1)} MB file`,
    },
    { name: "loadProject, 1,000 jobs (in process, warm)", value: median(load1k.slice(1)), unit: "ms", notes: `first call ${load1k[0]!.toFixed(0)} ms` },
    { name: "loadProject, 10,000 jobs (in process, warm)", value: median(load10k.slice(1)), unit: "ms", notes: `first call ${load10k[0]!.toFixed(0)} ms` },
    {
      name: "yaml.parse of the same 10,000-job text",
      value: median(yaml10k),
      unit: "ms",
      notes: `the whole loader is ${(median(yaml10k) / median(load10k.slice(1))).toFixed(1)}x faster than the yaml package's parse alone`,
    },
  ];
  return {
    title: "Config loading and `svc validate`",
    method:
      `Generated svc.yaml files of 1,000 and 10,000 jobs (bench/validate.bench.ts): every job with description, ` +
      `command, schedule and tags, a quarter of them after: jobs, and a share with timezone, sla, retries, env, output, ` +
      `healthcheck and notify entries (~11 lines per job); plus a 1,000-job worst case using every field on every job. ` +
      `Wall time of \`node bin/svc.js -c <file> validate\` ` +
      `(spawn to exit), ${RUNS} runs interleaved with \`node -e 0\` runs (the floor of any Node CLI here); the main ` +
      `thread's CPU time of separate runs (read from /proc at exit), which on a shared machine tracks the idle-machine ` +
      `wall time better than wall time does; then ` +
      `\`loadProject\` in this process (first call, then the median of the rest). ${built ?? "dist/ was up to date."} ` +
      `Load average ${loadavg()[0]!.toFixed(2)} at the end.`,
    results,
  };
}
