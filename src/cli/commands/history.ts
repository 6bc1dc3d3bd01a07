/** `svc history <job> [--last <n>] [--since W] [--until W] [--json]`: the job's recent runs, newest first. */
import type { Command } from "commander";
import { clientFor } from "../client/index.js";
import { forJob, jobPath } from "../client/jobs.js";
import { cell, duration, localTime, statusText, styleFor, table, type Style } from "../client/present.js";
import type { AuditAnswer, JobDetail, RunRecord } from "../client/types.js";
import { sinceUntil, WHEN_HELP } from "../client/when.js";
import type { CliContext } from "../context.js";
import { printJson, printLine, UsageError } from "../output.js";

const MAX_LAST = 500;

export function register(program: Command, ctx: CliContext): void {
  program
    .command("history")
    .description("recent runs of a job, newest first")
    .argument("<job>", "job name")
    .option("--last <n>", `how many runs (1-${MAX_LAST})`, "20")
    .option("--since <when>", `runs created at or after: ${WHEN_HELP}`)
    .option("--until <when>", `runs created at or before: ${WHEN_HELP}`)
    .option("--json", 'print {"job", "runs": [run records]}')
    .addHelpText("after", "\nExamples:\n  svc history extract --last 5\n  svc history extract --since yesterday\n  svc history extract --since 2h --json")
    .action(async (job: string, opts: { last: string; since?: string; until?: string; json?: boolean }, cmd: Command) => {
      const usage = (m: string) => new UsageError(m, "see 'svc history --help'");
      const n = Number(opts.last);
      if (!/^[0-9]+$/.test(opts.last) || n < 1 || n > MAX_LAST) throw usage(`--last must be an integer from 1 to ${MAX_LAST}, got "${opts.last}"`);
      const { since, until } = sinceUntil(opts, usage, new Date());
      const client = await clientFor(cmd, ctx);
      // The job's runs, checked against svc.yaml first (an unknown job is named as such).
      const detail = await forJob(job, () => client.get<JobDetail>(jobPath(job), { runs: since || until ? 0 : n, next: 0 }));
      const runs = since || until ? (await client.get<AuditAnswer>("/api/audit", { job, since, until, limit: n })).runs : detail.runs;
      if (opts.json) return printJson(ctx.output, { job, runs });
      if (runs.length === 0) return printLine(ctx.output, since || until ? `(no runs of ${job} in that time)` : `(no runs of ${job} yet)`);
      printLine(ctx.output, runsTable(runs, styleFor(ctx), false));
    });
}

/** Runs as a table (history, audit); `withJob` adds the JOB column. */
export function runsTable(runs: RunRecord[], style: Style, withJob: boolean): string {
  // Params and slots get columns only when a run shown has them (secret values arrive as ***).
  const withParams = runs.some((r) => r.params && Object.keys(r.params).length > 0);
  const withSlot = runs.some((r) => r.scheduled_at);
  const headers = [
    "RUN",
    ...(withJob ? ["JOB"] : []),
    "STATUS",
    "TRIGGER",
    "BY",
    "ATTEMPT",
    ...(withSlot ? ["SLOT"] : []),
    "STARTED",
    "DURATION",
    "EXIT",
    ...(withParams ? ["PARAMS"] : []),
    "REASON / ERROR",
  ];
  const rows = runs.map((r) => [
    String(r.id),
    ...(withJob ? [r.job_name] : []),
    statusText(style, r.status) + (r.sla_breached ? style.yellow(" (SLA)") : ""),
    r.trigger,
    r.triggered_by,
    String(r.attempt),
    ...(withSlot ? [r.scheduled_at ? localTime(r.scheduled_at) : "-"] : []),
    localTime(r.started_at ?? r.created_at),
    duration(r.duration_ms),
    r.exit_code === null ? "-" : String(r.exit_code),
    ...(withParams ? [cell(paramsText(r.params))] : []),
    cell([r.reason, r.error].filter((x) => x).join(" / ")),
  ]);
  return table(headers, rows, style);
}

/** `day=2026-11-01 limit=10`, or `-`. */
export function paramsText(params: RunRecord["params"] | undefined): string {
  const entries = Object.entries(params ?? {});
  return entries.length === 0 ? "-" : entries.map(([k, v]) => `${k}=${String(v)}`).join(" ");
}
