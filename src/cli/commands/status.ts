/**
 * `svc status [--tag <tag>] [--json]`: one line per job: what it is doing
 * now (from its unfinished runs, not its newest run), whether it is paused,
 * its last run and its next run in the job's own zone. `--json` prints the
 * API's `{"jobs": [...]}` (GET /api/jobs). `svc status JOB` is `svc show JOB`.
 */
import type { Command } from "commander";
import { clientFor } from "../client/index.js";
import { jobState } from "../client/jobs.js";
import { cell, localTime, statusText, styleFor, table, zoneTime, type Style } from "../client/present.js";
import type { JobsAnswer, JobSummary } from "../client/types.js";
import type { CliContext } from "../context.js";
import { CliError, printJson, printLine } from "../output.js";
import { configDriftWarning } from "./drift.js";
import { showJob } from "./show.js";

export function register(program: Command, ctx: CliContext): void {
  program
    .command("status")
    .description("show every job: state, paused, last run, next run (in the job's zone), tags; `status JOB` shows one job in detail")
    .argument("[job]", "one job in detail (as `svc show JOB`)")
    .option("--tag <tag>", "only jobs with this tag")
    .option("--json", 'print {"jobs": [...]} as GET /api/jobs answers it (with JOB: as `svc show --json`)')
    .action(async (job: string | undefined, opts: { tag?: string; json?: boolean }, cmd: Command) => {
      const client = await clientFor(cmd, ctx);
      if (job !== undefined) return showJob(ctx, client, job, { json: opts.json === true });
      const answer = await client.get<JobsAnswer>("/api/jobs", { tag: opts.tag });
      // An unknown tag is an error with --json too (as every other --tag), not an empty list.
      if (answer.jobs.length === 0 && opts.tag !== undefined) throw new CliError(`no job has the tag "${opts.tag}" (svc tags list shows the tags)`);
      if (opts.json) return printJson(ctx.output, answer);
      await configDriftWarning(ctx, client);
      if (answer.jobs.length === 0) return printLine(ctx.output, "(no jobs)");
      printLine(ctx.output, statusTable(answer.jobs, styleFor(ctx)));
    });
}

export function statusTable(jobs: JobSummary[], style: Style): string {
  const rows = jobs.map((j) => {
    const last = j.last_run;
    const lastAt = last ? (last.finished_at ?? last.started_at ?? last.created_at) : null;
    return [
      j.name,
      state(j, style),
      j.paused ? style.yellow("yes") : "no",
      last ? `${statusText(style, last.status)} #${last.id}` : "-",
      localTime(lastAt),
      nextRun(j, style),
      j.tags.length > 0 ? j.tags.join(",") : "-",
    ];
  });
  // Runs, as /api/status counts them: a job with two RUNNING runs (concurrency: allow) counts twice.
  const running = jobs.reduce((n, j) => n + j.active_runs.filter((r) => r.status === "RUNNING").length, 0);
  const paused = jobs.filter((j) => j.paused).length;
  const summary = `${jobs.length} job${jobs.length === 1 ? "" : "s"}, ${running} running, ${paused} paused`;
  return `${table(["JOB", "STATE", "PAUSED", "LAST RUN", "LAST RUN AT", "NEXT RUN", "TAGS"], rows, style)}\n${style.dim(summary)}`;
}

function state(j: JobSummary, style: Style): string {
  const s = jobState(j);
  if (s === "idle") return s;
  const n = j.active_runs.filter((r) => r.status.toLowerCase() === s).length;
  const text = n > 1 ? `${s} (${n})` : s;
  return s === "running" ? style.cyan(text) : style.yellow(text);
}

/** The next slot in the job's own zone (`2026-11-23 02:30:00 CET`), `paused`, `manual` or `after <upstream>`. */
function nextRun(j: JobSummary, style: Style): string {
  if (j.paused && j.frequency !== "manual") return style.yellow("paused");
  if (j.next_run) return zoneTime(j.next_run_local) ?? localTime(j.next_run);
  if (j.frequency.startsWith("after:")) return cell(`after ${j.frequency.slice("after:".length)}`, 40);
  return j.frequency === "manual" ? "manual" : "-";
}
