/**
 * Acting on jobs (SPEC "Command-line client", CONTRACT §3 targets):
 * `run <job>|--tag [--reason] [--wait]`, `retry <job> [--wait]`,
 * `cancel <job>`, `skip <job>`, `pause`/`resume` `<job>|--tag`.
 * `--wait` follows the run's log live and exits 0 on SUCCESS, 1 otherwise.
 */
import type { Command } from "commander";
import { clientFor } from "../client/index.js";
import { followUntilDone, LogPrinter, type StartedRunRef } from "../client/follow.js";
import type { DaemonClient } from "../client/http.js";
import { forJob, jobOrTag, jobPath, jobsWithTag } from "../client/jobs.js";
import { paramOptions, paramsFor, type ParamOpts } from "../client/params.js";
import { duration, statusText, styleFor } from "../client/present.js";
import type { RunRecord, StartedRun } from "../client/types.js";
import type { CliContext } from "../context.js";
import { CliError, printJson, printLine, UsageError } from "../output.js";

const MAX_REASON = 500;

interface RunOpts extends ParamOpts {
  reason?: string;
  tag?: string;
  wait?: boolean;
  json?: boolean;
}

export function register(program: Command, ctx: CliContext): void {
  const run = program
    .command("run")
    .description("trigger a manual run now (one job, or every job with --tag)")
    .argument("[job]", "job name")
    .option("--reason <text>", `why (free text, at most ${MAX_REASON} characters; kept in the run record and the audit)`);
  paramOptions(run)
    .option("--tag <tag>", "run every job with this tag")
    .option("--wait", "follow the run's log live; exit 0 when it ends SUCCESS, 1 otherwise")
    .option("--json", 'print {"job", "run_id", "cycle_id", "status"} (with --wait: the final run records)')
    .action((job: string | undefined, opts: RunOpts, cmd: Command) => runCommand(ctx, cmd, job, opts));

  program
    .command("retry")
    .description("retry the job's most recent run, which must be FAILED (a new run in the same cycle)")
    .argument("<job>", "job name")
    .option("--wait", "follow the new run's log live; exit 0 when it ends SUCCESS, 1 otherwise")
    .option("--json", 'print {"job", "run_id", "cycle_id", "status"}')
    .action(async (job: string, opts: { wait?: boolean; json?: boolean }, cmd: Command) => {
      const client = await clientFor(cmd, ctx);
      const started = await forJob(job, () => client.post<StartedRun>(jobPath(job, "/retry")));
      await reportStarted(ctx, client, [{ job, ...started }], { ...opts, verb: "retrying" });
    });

  program
    .command("cancel")
    .description("cancel every RUNNING or RETRYING run of the job (each ends FAILED)")
    .argument("<job>", "job name")
    .option("--json", 'print the daemon\'s answer {"job", "cancelled", "runs"}')
    .action(async (job: string, opts: { json?: boolean }, cmd: Command) => {
      const client = await clientFor(cmd, ctx);
      const res = await forJob(job, () => client.post<{ job: string; cancelled: number[] }>(jobPath(job, "/cancel")));
      if (opts.json) return printJson(ctx.output, res);
      printLine(ctx.output, `cancelled ${res.cancelled.map((id) => `run ${id}`).join(", ")} of ${job}`);
    });

  program
    .command("skip")
    .description("mark the job's oldest PENDING run SKIPPED")
    .argument("<job>", "job name")
    .option("--json", 'print the daemon\'s answer {"run"}')
    .action(async (job: string, opts: { json?: boolean }, cmd: Command) => {
      const client = await clientFor(cmd, ctx);
      const res = await forJob(job, () => client.post<{ run: RunRecord }>(jobPath(job, "/skip")));
      if (opts.json) return printJson(ctx.output, res);
      printLine(ctx.output, `skipped run ${res.run.id} of ${job}`);
    });

  for (const [verb, past, desc] of [
    ["pause", "paused", "pause a job, or every job with --tag: no scheduled or dependency runs until resumed (svc run still works)"],
    ["resume", "resumed", "resume a paused job, or every job with --tag"],
  ] as const) {
    program
      .command(verb)
      .description(desc)
      .argument("[job]", "job name")
      .option("--tag <tag>", `${verb} every job with this tag`)
      .option("--json", "print the daemon's answer")
      .action(async (job: string | undefined, opts: { tag?: string; json?: boolean }, cmd: Command) => {
        const which = jobOrTag(verb, job, opts.tag);
        const client = await clientFor(cmd, ctx);
        if ("job" in which) {
          const res = await forJob(which.job, () => client.post<{ job: string; paused: boolean }>(jobPath(which.job, `/${verb}`)));
          if (opts.json) return printJson(ctx.output, res);
          return printLine(ctx.output, `${past} ${res.job}`);
        }
        const res = await client.post<{ tag: string; jobs: string[] }>(`/api/jobs/${verb}`, { tag: which.tag });
        if (opts.json) return printJson(ctx.output, res);
        printLine(ctx.output, `${past} ${res.jobs.length} job${res.jobs.length === 1 ? "" : "s"} with tag ${res.tag}: ${res.jobs.join(", ")}`);
      });
  }
}

async function runCommand(ctx: CliContext, cmd: Command, job: string | undefined, opts: RunOpts): Promise<void> {
  const which = jobOrTag("run", job, opts.tag);
  if (opts.reason !== undefined && opts.reason.length > MAX_REASON) {
    throw new UsageError(`--reason is ${opts.reason.length} characters; at most ${MAX_REASON}`, "see 'svc run --help'");
  }
  if ("tag" in which && (opts.param !== undefined || opts.paramsFile !== undefined)) {
    throw new UsageError("-p and --params-file go with one job, not --tag (each job declares its own params)", "see 'svc run --help'");
  }
  const client = await clientFor(cmd, ctx);
  const names = "job" in which ? [which.job] : await jobsWithTag(client, which.tag);
  const params = "job" in which ? await paramsFor(client, which.job, opts, "run") : undefined;
  const body = opts.reason === undefined && params === undefined ? undefined : { reason: opts.reason, params };
  const started: (StartedRun & { job: string })[] = [];
  for (const name of names) {
    const res = await forJob(name, () => client.post<StartedRun>(jobPath(name, "/run"), body));
    started.push({ job: name, ...res });
  }
  await reportStarted(ctx, client, started, { ...opts, verb: "started", tag: "tag" in which ? which.tag : undefined });
}

/** Prints what was started; with --wait follows the runs and fails unless all end SUCCESS. */
async function reportStarted(
  ctx: CliContext,
  client: DaemonClient,
  started: (StartedRun & { job: string })[],
  opts: { wait?: boolean; json?: boolean; verb: string; tag?: string },
): Promise<void> {
  const style = styleFor(ctx);
  if (!opts.wait) {
    if (opts.json) return printJson(ctx.output, opts.tag === undefined && started.length === 1 ? started[0] : { tag: opts.tag, runs: started });
    for (const s of started) printLine(ctx.output, `${opts.verb} run ${s.run_id} of ${s.job} (${statusText(style, s.status)}, cycle ${s.cycle_id})`);
    return;
  }
  const refs: StartedRunRef[] = started.map((s) => ({ job: s.job, runId: s.run_id }));
  // With --wait the log is the output; what happened goes to stderr, so stdout stays the job's own.
  if (!opts.json) for (const s of started) ctx.output.err(`svc: ${opts.verb} run ${s.run_id} of ${s.job}; following its log\n`);
  const printer = opts.json ? null : new LogPrinter(ctx, { includeHealthcheck: false, prefix: started.length > 1 }, started.map((s) => s.job));
  const finals = await followUntilDone(client, printer, refs);
  if (opts.json) printJson(ctx.output, started.length === 1 && opts.tag === undefined ? finals[0] : { tag: opts.tag, runs: finals });
  else for (const r of finals) ctx.output.err(`svc: ${runSummary(r)}\n`);
  const bad = finals.filter((r) => r.status !== "SUCCESS");
  if (bad.length > 0) {
    throw new CliError(opts.json || finals.length === 1 ? "" : `${bad.length} of ${finals.length} runs did not succeed`);
  }
}

/** `run 42 of extract: FAILED (exit 3, 1.2s): timeout after 5s`. */
export function runSummary(r: RunRecord): string {
  const exit = r.exit_code === null ? "no exit code" : `exit ${r.exit_code}`;
  const error = r.error && r.error !== `exit code ${r.exit_code}` ? `: ${r.error}` : "";
  return `run ${r.id} of ${r.job_name}: ${r.status} (${exit}, ${duration(r.duration_ms)})${error}`;
}
