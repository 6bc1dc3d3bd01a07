/**
 * `svc logs <job> [--run <id>] [-f] [--tail N] [--include-healthcheck] [--json]`
 * and `svc logs --tag <tag> [-f] [--tail N]`, as `docker logs` and
 * `journalctl`: the job's latest run (or `--run`), `--tail N` / `-n N` its
 * last N lines, `-f` / `--follow` follows live through the WebSocket until
 * the run ends. With `--tag`: every job with the tag, lines merged by time
 * and prefixed by job name, and `-f` follows each new run as it starts
 * (like `docker compose logs -f`). Lines the job wrote to stderr are marked
 * `[stderr] `. A bare `--tail` (SPEC's form) means follow.
 */
import type { Command } from "commander";
import type { DaemonClient } from "../client/http.js";
import { clientFor } from "../client/index.js";
import { followUntilDone, LogPrinter, storedLines, tagHistory, tailTag, type LineCount } from "../client/follow.js";
import { forJob, jobPath } from "../client/jobs.js";
import type { JobDetail, JobsAnswer, LogPage, RunRecord } from "../client/types.js";
import { ApiError } from "../client/errors.js";
import type { CliContext } from "../context.js";
import { CliError, note, printJson, UsageError } from "../output.js";

interface LogsOpts {
  run?: string;
  follow?: boolean;
  tail?: string | boolean;
  lines?: string;
  includeHealthcheck?: boolean;
  tag?: string;
  json?: boolean;
}

const WAIT_FOR_RUN_MS = 1000;

export function register(program: Command, ctx: CliContext): void {
  program
    .command("logs")
    .description("print a run's log (default: the job's latest run); -f follows it live, --tail N shows the last N lines")
    .argument("[job]", "job name")
    .option("--run <id>", "this run instead of the latest")
    .option("-f, --follow", "follow live until the run ends (with --tag: every job with the tag and each new run, until interrupted)")
    .option("--tail [n]", "only the last N lines (per job with --tag); a bare --tail follows, as -f")
    .option("-n, --lines <n>", "only the last N lines (as --tail N)")
    .option("--include-healthcheck", "also show healthcheck output (marked [healthcheck])")
    .option("--tag <tag>", "every job with this tag, lines merged by time and prefixed by the job name")
    .option("--json", 'print {"run", "job", "status", "lines": [{"seq", "ts", "stream", "line"}]} (not with -f)')
    .addHelpText(
      "after",
      "\nLines the job wrote to stderr are marked [stderr] (red on a terminal).\n\nExamples:\n  svc logs extract\n  svc logs extract -f\n  svc logs extract --tail 20 -f\n  svc logs extract --run 42 --include-healthcheck\n  svc logs --tag etl -f",
    )
    .action((job: string | undefined, opts: LogsOpts, cmd: Command) => logs(ctx, cmd, job, opts));
}

async function logs(ctx: CliContext, cmd: Command, jobArg: string | undefined, opts: LogsOpts): Promise<void> {
  const usage = (m: string) => new UsageError(m, "see 'svc logs --help'");
  let job = jobArg;
  let tail = opts.tail;
  // `svc logs --tail extract`: commander took the job name as --tail's value.
  if (typeof tail === "string" && !/^[0-9]+$/.test(tail) && job === undefined) [job, tail] = [tail, true];
  if (typeof tail === "string" && opts.lines !== undefined) throw usage("--tail N and -n N say the same thing: give one");
  const follow = opts.follow === true || tail === true;
  const countText = typeof tail === "string" ? tail : opts.lines;
  const count: LineCount = countText === undefined ? "all" : parseCount(countText, usage);
  if (opts.json && follow) throw usage("--json prints one document; it cannot be combined with -f (or a bare --tail)");
  if (opts.tag !== undefined && (job !== undefined || opts.run !== undefined)) throw usage("--tag cannot be combined with a job name or --run");
  if (opts.tag === undefined && job === undefined && opts.run === undefined) throw usage("give a job name, --run <id> or --tag <tag>");
  const runId = opts.run === undefined ? undefined : parseRunId(opts.run);
  const includeHealthcheck = opts.includeHealthcheck === true;
  const client = await clientFor(cmd, ctx);

  if (opts.tag !== undefined) {
    if (follow) await tailTag(client, ctx, opts.tag, includeHealthcheck, count);
    return printTagLatest(ctx, client, opts.tag, includeHealthcheck, count, opts.json === true);
  }

  const run = await pickRun(ctx, client, job, runId, follow);
  const keep = (l: { stream: string }) => includeHealthcheck || l.stream !== "healthcheck";
  const printer = new LogPrinter(ctx, { includeHealthcheck, prefix: false });
  if (follow) {
    // --tail N -f: the last N lines first, then live from there.
    let afterSeq = 0;
    if (count !== "all") {
      const stored = await storedLines(client, run.id, count, keep);
      for (const l of stored.lines) printer.line(run.job_name, l);
      afterSeq = stored.lastSeq;
    }
    const [final] = await followUntilDone(client, printer, [{ job: run.job_name, runId: run.id, afterSeq }]);
    note(ctx, `run ${run.id} of ${run.job_name} ended ${final!.status}`);
    return;
  }
  const { lines } = await storedLines(client, run.id, count, keep);
  if (opts.json) return printJson(ctx.output, { run: run.id, job: run.job_name, status: run.status, lines });
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
    // 100: a long run may be followed by many runs refused at once (an every-minute slot during it, forbid).
    const detail = await forJob(name, () => client.get<JobDetail>(jobPath(name), { runs: 100, next: 0 }));
    // The run that is going on, not a newer one refused at once (concurrency forbid: created SKIPPED,
    // as a slot that fires during a long run is): its lines are the ones wanted.
    const active = detail.active_runs.find((r) => r.status === "RUNNING" || r.status === "RETRYING");
    if (active) return detail.runs.find((r) => r.id === active.id) ?? (await client.get<RunRecord>(`/api/runs/${active.id}`));
    // Else the newest that started (CLI.md): a PENDING or SKIPPED run has no lines.
    const started = detail.runs.find((r) => r.started_at !== null);
    if (started ?? detail.runs[0]) return (started ?? detail.runs[0])!;
    if (!waitForFirst) throw new CliError(`job ${name} has no runs yet (\`svc run ${name}\` starts one)`);
    if (!told) note(ctx, `job ${name} has no runs yet; waiting for its first run`);
    told = true;
    await new Promise((r) => setTimeout(r, WAIT_FOR_RUN_MS));
  }
}

/** Every line of a run, in seq order (svc export). */
export async function allLines(client: DaemonClient, runId: number): Promise<LogPage["lines"]> {
  return (await storedLines(client, runId, "all", () => true)).lines;
}

/** `svc logs --tag <tag>` without -f: the latest run of each job, lines merged by time, prefixed. */
async function printTagLatest(ctx: CliContext, client: DaemonClient, tag: string, includeHealthcheck: boolean, count: LineCount, json: boolean): Promise<void> {
  const { jobs } = await client.get<JobsAnswer>("/api/jobs", { tag });
  if (jobs.length === 0) throw new CliError(`no job has the tag "${tag}" (svc tags list shows the tags)`);
  const history = await tagHistory(client, jobs, count, includeHealthcheck);
  if (json) {
    return printJson(ctx.output, { tag, runs: history.runs.map((r) => ({ run: r.run.id, job: r.job, status: r.run.status, lines: r.lines })) });
  }
  const printer = new LogPrinter(ctx, { includeHealthcheck, prefix: true }, jobs.map((j) => j.name));
  for (const { job, line } of history.lines) printer.line(job, line);
}

function parseRunId(text: string): number {
  if (!/^[1-9][0-9]*$/.test(text)) throw new UsageError(`--run must be a run id (a positive integer), got "${text}"`, "see 'svc logs --help'");
  return Number(text);
}

function parseCount(text: string, usage: (m: string) => UsageError): number {
  if (!/^[0-9]+$/.test(text)) throw usage(`--tail / -n must be a number of lines, got "${text}"`);
  return Number(text);
}
