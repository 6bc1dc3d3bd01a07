/**
 * `svc show JOB [--runs N] [--json]` (also `svc status JOB`): one job in
 * detail, as `systemctl status UNIT` shows one unit: what it is doing now,
 * its schedule and next slots (in the job's zone), its config, its last
 * alert and its last runs. The data is `GET /api/jobs/:name`.
 */
import type { Command } from "commander";
import type { DaemonClient } from "../client/http.js";
import { clientFor } from "../client/index.js";
import { forJob, jobPath, jobState } from "../client/jobs.js";
import { cell, localTime, styleFor, zoneTime, type Style } from "../client/present.js";
import type { JobDetail } from "../client/types.js";
import type { CliContext } from "../context.js";
import { printJson, printLine, UsageError } from "../output.js";
import { configDriftWarning } from "./drift.js";
import { runsTable } from "./history.js";

const DEFAULT_RUNS = 5;
const MAX_RUNS = 500;

export function register(program: Command, ctx: CliContext): void {
  program
    .command("show")
    .description("one job in detail: state, schedule and next runs, config, last alert, last runs (as GET /api/jobs/:name)")
    .argument("<job>", "job name")
    .option("--runs <n>", `how many recent runs (0-${MAX_RUNS})`, String(DEFAULT_RUNS))
    .option("--json", 'print {"job", "state", "runs", "active_runs", "next_runs", "last_alert"} as GET /api/jobs/:name answers it')
    .addHelpText("after", "\nExamples:\n  svc show extract\n  svc status extract --json")
    .action(async (job: string, opts: { runs: string; json?: boolean }, cmd: Command) => {
      const runs = Number(opts.runs);
      if (!/^[0-9]+$/.test(opts.runs) || runs > MAX_RUNS) {
        throw new UsageError(`--runs must be an integer from 0 to ${MAX_RUNS}, got "${opts.runs}"`, "see 'svc show --help'");
      }
      await showJob(ctx, await clientFor(cmd, ctx), job, { json: opts.json === true, runs });
    });
}

export async function showJob(ctx: CliContext, client: DaemonClient, name: string, opts: { json: boolean; runs?: number }): Promise<void> {
  const detail = await forJob(name, () => client.get<JobDetail>(jobPath(name), { runs: opts.runs ?? DEFAULT_RUNS, next: 5 }));
  if (opts.json) return printJson(ctx.output, detail);
  await configDriftWarning(ctx, client);
  printLine(ctx.output, describeJob(name, detail, styleFor(ctx)));
}

export function describeJob(name: string, d: JobDetail, style: Style): string {
  const job = d.job as JobView;
  const out: string[] = [`${style.bold(name)}${job.description ? ` - ${job.description}` : ""}`];
  const field = (key: string, value: string) => out.push(`  ${`${key}:`.padEnd(13)} ${value}`);
  field("state", stateLine(d, style));
  field("schedule", scheduleText(job));
  if (d.state.paused) field("next run", style.yellow("paused: no scheduled or dependency-triggered runs until `svc resume`"));
  else if (d.next_runs.length > 0) d.next_runs.forEach((s, i) => field(i === 0 ? "next runs" : "", zoneTime(s.local) ?? localTime(s.utc)));
  if (job.depends_on && job.depends_on.length > 0) field("depends on", job.depends_on.join(", "));
  field("command", cell(Array.isArray(job.command) ? JSON.stringify(job.command) : String(job.command ?? ""), 100));
  field("tags", job.tags && job.tags.length > 0 ? job.tags.join(", ") : "-");
  field("policy", policyText(job));
  if (job.output && Object.keys(job.output).length > 0) field("outputs", Object.entries(job.output).map(([k, v]) => `${k} (${v})`).join(", "));
  field("last success", localTime(d.state.last_success));
  field("last failure", localTime(d.state.last_failure));
  const a = d.last_alert;
  field(
    "last alert",
    a ? `#${a.id} ${a.event} to ${a.channel}: ${a.status}${a.error ? ` (${cell(a.error, 60)})` : ""}, ${localTime(a.last_attempt_at ?? a.created_at)}` : "-",
  );
  out.push("");
  out.push(d.runs.length > 0 ? runsTable(d.runs, style, false) : `(no runs of ${name} yet)`);
  return out.join("\n");
}

interface JobView {
  description?: string | null;
  command?: string | string[];
  frequency?: string;
  time?: string | null;
  weekday?: string | null;
  day_of_month?: number | null;
  timezone?: string;
  depends_on?: string[];
  tags?: string[];
  timeout?: string | null;
  sla?: string | null;
  retries?: number;
  retry_delay?: string;
  on_failure?: string;
  concurrency?: string;
  catchup?: boolean;
  output?: Record<string, string>;
}

function stateLine(d: JobDetail, style: Style): string {
  const s = jobState(d);
  const ids = (status: string) => d.active_runs.filter((r) => r.status === status).map((r) => r.id);
  const run = (id: number) => d.runs.find((r) => r.id === id);
  if (s === "idle") return "idle";
  const list = ids(s.toUpperCase());
  const first = run(list[0]!);
  const since = first?.started_at ? ` since ${localTime(first.started_at)}` : "";
  const text = `${s} (run${list.length > 1 ? "s" : ""} ${list.join(", ")}${list.length === 1 ? since : ""})`;
  return s === "running" ? style.cyan(text) : style.yellow(text);
}

function scheduleText(job: JobView): string {
  const f = job.frequency ?? "-";
  if (f === "manual") return "manual (runs only when triggered: svc run)";
  if (f.startsWith("after:")) return `${f} (runs when its upstream succeeds, in the same cycle)`;
  const parts = [f];
  if (job.weekday) parts.push(job.weekday);
  if (job.day_of_month !== null && job.day_of_month !== undefined) parts.push(`day ${job.day_of_month}`);
  if (job.time) parts.push(`${job.time.slice(0, 2)}:${job.time.slice(2)}`);
  if (job.timezone) parts.push(job.timezone);
  return parts.join(" ") + (job.catchup ? ", catchup" : "");
}

function policyText(job: JobView): string {
  const parts = [
    `retries ${job.retries ?? 0}${job.retries ? ` (${job.retry_delay})` : ""}`,
    `on_failure ${job.on_failure ?? "alert"}`,
    `concurrency ${job.concurrency ?? "forbid"}`,
  ];
  if (job.timeout) parts.push(`timeout ${job.timeout}`);
  if (job.sla) parts.push(`sla ${job.sla}`);
  return parts.join(", ");
}
