/**
 * `svc status [--tag <tag>] [--json]`: one line per job: its state, whether
 * it is paused, its last run (status and time) and its next run in local
 * time. `--json` prints the API's `{"jobs": [...]}` (GET /api/jobs).
 */
import type { Command } from "commander";
import { clientFor } from "../client/index.js";
import { cell, localTime, statusText, styleFor, table, type Style } from "../client/present.js";
import type { JobsAnswer, JobSummary } from "../client/types.js";
import type { CliContext } from "../context.js";
import { CliError, printJson, printLine } from "../output.js";

export function register(program: Command, ctx: CliContext): void {
  program
    .command("status")
    .description("show every job: state, paused, last run, next run (local time), tags")
    .option("--tag <tag>", "only jobs with this tag")
    .option("--json", 'print {"jobs": [...]} as GET /api/jobs answers it')
    .action(async (opts: { tag?: string; json?: boolean }, cmd: Command) => {
      const client = await clientFor(cmd, ctx);
      const answer = await client.get<JobsAnswer>("/api/jobs", { tag: opts.tag });
      if (opts.json) return printJson(ctx.output, answer);
      if (answer.jobs.length === 0) {
        if (opts.tag !== undefined) throw new CliError(`no job has the tag "${opts.tag}" (svc tags list shows the tags)`);
        return printLine(ctx.output, "(no jobs)");
      }
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
      nextRun(j),
      j.tags.length > 0 ? j.tags.join(",") : "-",
    ];
  });
  const running = jobs.filter((j) => j.last_run?.status === "RUNNING").length;
  const paused = jobs.filter((j) => j.paused).length;
  const summary = `${jobs.length} job${jobs.length === 1 ? "" : "s"}, ${running} running, ${paused} paused`;
  return `${table(["JOB", "STATE", "PAUSED", "LAST RUN", "LAST RUN AT", "NEXT RUN", "TAGS"], rows, style)}\n${style.dim(summary)}`;
}

/** What the job is doing now: its active run's status, else idle. */
function state(j: JobSummary, style: Style): string {
  const s = j.last_run?.status;
  if (s === "RUNNING") return style.cyan("running");
  if (s === "RETRYING" || s === "PENDING") return style.yellow(s.toLowerCase());
  return "idle";
}

function nextRun(j: JobSummary): string {
  if (j.next_run) return localTime(j.next_run);
  if (j.frequency.startsWith("after:")) return cell(`after ${j.frequency.slice("after:".length)}`, 40);
  return j.frequency === "manual" ? "manual" : "-";
}
