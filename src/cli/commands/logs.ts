/**
 * `svc logs <job> [--run <id>] [--tail] [--include-healthcheck] [--json]`
 * and `svc logs --tag <tag> [--tail]`. Default: the job's latest run.
 * `--tail` follows live through the WebSocket until the run ends; with
 * `--tag` it follows every job with the tag, and each new run as it starts,
 * lines prefixed by job name (like `docker compose logs -f`).
 */
import type { Command } from "commander";
import type { DaemonClient } from "../client/http.js";
import { clientFor } from "../client/index.js";
import { followUntilDone, LogPrinter, tailTag } from "../client/follow.js";
import { forJob, jobPath } from "../client/jobs.js";
import type { JobDetail, JobsAnswer, LogPage, RunRecord } from "../client/types.js";
import { ApiError } from "../client/errors.js";
import type { CliContext } from "../context.js";
import { CliError, printJson, UsageError } from "../output.js";

interface LogsOpts {
  run?: string;
  tail?: boolean;
  includeHealthcheck?: boolean;
  tag?: string;
  json?: boolean;
}

const PAGE = 10_000;
const WAIT_FOR_RUN_MS = 1000;

export function register(program: Command, ctx: CliContext): void {
  program
    .command("logs")
    .description("print a run's log (default: the job's latest run); --tail follows it live")
    .argument("[job]", "job name")
    .option("--run <id>", "this run instead of the latest")
    .option("--tail", "follow live until the run ends (with --tag: every job with the tag, until interrupted)")
    .option("--include-healthcheck", "also show healthcheck output (marked [healthcheck])")
    .option("--tag <tag>", "every job with this tag, each line prefixed by the job name")
    .option("--json", 'print {"run", "job", "status", "lines": [{"seq", "ts", "stream", "line"}]} (not with --tail)')
    .addHelpText("after", "\nExamples:\n  svc logs extract\n  svc logs extract --run 42 --include-healthcheck\n  svc logs extract --tail\n  svc logs --tag etl --tail")
    .action((job: string | undefined, opts: LogsOpts, cmd: Command) => logs(ctx, cmd, job, opts));
}

async function logs(ctx: CliContext, cmd: Command, job: string | undefined, opts: LogsOpts): Promise<void> {
  const usage = (m: string) => new UsageError(m, "see 'svc logs --help'");
  if (opts.json && opts.tail) throw usage("--json prints one document; it cannot be combined with --tail");
  if (opts.tag !== undefined && (job !== undefined || opts.run !== undefined)) throw usage("--tag cannot be combined with a job name or --run");
  if (opts.tag === undefined && job === undefined && opts.run === undefined) throw usage("give a job name, --run <id> or --tag <tag>");
  const runId = opts.run === undefined ? undefined : parseRunId(opts.run);
  const includeHealthcheck = opts.includeHealthcheck === true;
  const client = await clientFor(cmd, ctx);

  if (opts.tag !== undefined) {
    if (opts.tail) await tailTag(client, ctx, opts.tag, includeHealthcheck);
    return printTagLatest(ctx, client, opts.tag, includeHealthcheck, opts.json === true);
  }

  const run = await pickRun(ctx, client, job, runId, opts.tail === true);
  if (opts.tail) {
    const printer = new LogPrinter(ctx, { includeHealthcheck, prefix: false });
    const [final] = await followUntilDone(client, printer, [{ job: run.job_name, runId: run.id }]);
    ctx.output.err(`svc: run ${run.id} of ${run.job_name} ended ${final!.status}\n`);
    return;
  }
  const lines = (await allLines(client, run.id)).filter((l) => includeHealthcheck || l.stream !== "healthcheck");
  if (opts.json) return printJson(ctx.output, { run: run.id, job: run.job_name, status: run.status, lines });
  const printer = new LogPrinter(ctx, { includeHealthcheck, prefix: false });
  for (const l of lines) printer.line(run.job_name, l);
}

/** --run (checked against the job when both are given), else the job's latest run. */
async function pickRun(ctx: CliContext, client: DaemonClient, job: string | undefined, runId: number | undefined, waitForFirst: boolean): Promise<RunRecord> {
  if (runId !== undefined) {
    const run = await client.get<RunRecord>(`/api/runs/${runId}`).catch((e: unknown) => {
      if (e instanceof ApiError && e.status === 404) throw new CliError(`run ${runId} not found`);
      throw e;
    });
    if (job !== undefined && run.job_name !== job) throw new CliError(`run ${runId} is a run of ${run.job_name}, not of ${job}`);
    return run;
  }
  const name = job!;
  let told = false;
  for (;;) {
    const detail = await forJob(name, () => client.get<JobDetail>(jobPath(name), { runs: 1 }));
    if (detail.runs[0]) return detail.runs[0];
    if (!waitForFirst) throw new CliError(`job ${name} has no runs yet (\`svc run ${name}\` starts one)`);
    if (!told) ctx.output.err(`svc: job ${name} has no runs yet; waiting for its first run\n`);
    told = true;
    await new Promise((r) => setTimeout(r, WAIT_FOR_RUN_MS));
  }
}

/** Every line of a run, in seq order, page by page. */
export async function allLines(client: DaemonClient, runId: number): Promise<LogPage["lines"]> {
  const out: LogPage["lines"] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await client.get<LogPage>(`/api/runs/${runId}/logs`, { limit: PAGE, offset });
    out.push(...page.lines);
    if (page.lines.length < PAGE || offset + PAGE >= page.total) return out;
  }
}

/** `svc logs --tag <tag>` without --tail: the latest run of each job, prefixed. */
async function printTagLatest(ctx: CliContext, client: DaemonClient, tag: string, includeHealthcheck: boolean, json: boolean): Promise<void> {
  const { jobs } = await client.get<JobsAnswer>("/api/jobs", { tag });
  if (jobs.length === 0) throw new CliError(`no job has the tag "${tag}" (svc tags list shows the tags)`);
  const printer = new LogPrinter(ctx, { includeHealthcheck, prefix: true }, jobs.map((j) => j.name));
  const docs = [];
  for (const j of jobs) {
    if (!j.last_run) continue;
    const lines = (await allLines(client, j.last_run.id)).filter((l) => includeHealthcheck || l.stream !== "healthcheck");
    if (json) docs.push({ run: j.last_run.id, job: j.name, status: j.last_run.status, lines });
    else for (const l of lines) printer.line(j.name, l);
  }
  if (json) printJson(ctx.output, { tag, runs: docs });
}

function parseRunId(text: string): number {
  if (!/^[1-9][0-9]*$/.test(text)) throw new UsageError(`--run must be a run id (a positive integer), got "${text}"`, "see 'svc logs --help'");
  return Number(text);
}
