/**
 * Acting on jobs (SPEC "Command-line client", CONTRACT §3 targets):
 * `run <job> [--cycle ID] | --tag T [--reason] [--wait]`, `retry <job> [--wait]`,
 * `cancel <job>`, `skip <job>`, `pause`/`resume` `<job>|--tag`.
 * `--wait` follows the log live and exits 0 on SUCCESS, 1 otherwise.
 */
import type { Command } from "commander";
import { clientFor } from "../client/index.js";
import { followCycle, followUntilDone, LogPrinter } from "../client/follow.js";
import type { DaemonClient } from "../client/http.js";
import { forJob, jobOrTag, jobPath } from "../client/jobs.js";
import { paramOptions, paramsFor, type ParamOpts } from "../client/params.js";
import { duration, statusText, styleFor, type Style } from "../client/present.js";
import type { JobDetail, RunRecord, StartedRun } from "../client/types.js";
import type { CliContext } from "../context.js";
import { CliError, confirm, note, printJson, UsageError } from "../output.js";

const MAX_REASON = 500;

interface RunOpts extends ParamOpts {
  reason?: string;
  tag?: string;
  cycle?: string;
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
    .option("--tag <tag>", "run a tag: its root jobs (no upstream inside the tag) in one new cycle; the rest follow them")
    .option("--cycle <id>", "join this earlier cycle (id or its first characters): upstream outputs of that cycle are found")
    .option("--wait", "follow the log live; exit 0 when the run (with --tag: every run of the cycle) ends SUCCESS, 1 otherwise")
    .option("--json", 'print {"run_id", "cycle_id", "status"} (with --wait: the final run record; with --tag: the cycle\'s)')
    .addHelpText(
      "after",
      "\nExamples:\n  svc run extract --reason \"backfill\" --wait\n  svc run --tag etl --wait\n  svc run load --cycle 6f1c2a0e     # re-run one step with the outputs of cycle 6f1c2a0e...",
    )
    .action((job: string | undefined, opts: RunOpts, cmd: Command) => runCommand(ctx, cmd, job, opts));

  program
    .command("retry")
    .description("retry the job's most recent run, which must be FAILED (a new run in the same cycle)")
    .argument("<job>", "job name")
    .option("--wait", "follow the new run's log live; exit 0 when it ends SUCCESS, 1 otherwise")
    .option("--json", 'print {"job", "run_id", "cycle_id", "status"}')
    .action(async (job: string, opts: { wait?: boolean; json?: boolean }, cmd: Command) => {
      const client = await clientFor(cmd, ctx);
      const started = await forJob(job, () => client.post<StartedRun & { retry_of?: number }>(jobPath(job, "/retry")));
      await reportStarted(ctx, client, { job, ...started }, { ...opts, verb: "retrying" });
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
      confirm(ctx, `cancelled ${res.cancelled.map((id) => `run ${id}`).join(", ")} of ${job}`);
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
      confirm(ctx, `skipped run ${res.run.id} of ${job}`);
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
          return confirm(ctx, `${past} ${res.job}`);
        }
        const res = await client.post<{ tag: string; jobs: string[] }>(`/api/jobs/${verb}`, { tag: which.tag });
        if (opts.json) return printJson(ctx.output, res);
        confirm(ctx, `${past} ${res.jobs.length} job${res.jobs.length === 1 ? "" : "s"} with tag ${res.tag}: ${res.jobs.join(", ")}`);
      });
  }
}

async function runCommand(ctx: CliContext, cmd: Command, job: string | undefined, opts: RunOpts): Promise<void> {
  const which = jobOrTag("run", job, opts.tag);
  const usage = (m: string) => new UsageError(m, "see 'svc run --help'");
  if (opts.reason !== undefined && opts.reason.length > MAX_REASON) throw usage(`--reason is ${opts.reason.length} characters; at most ${MAX_REASON}`);
  if (opts.cycle !== undefined && "tag" in which) throw usage("--cycle joins one job's run to an earlier cycle; it cannot be combined with --tag");
  if (opts.cycle !== undefined && !/^[0-9a-fA-F-]{4,36}$/.test(opts.cycle)) {
    throw usage(`--cycle must be a cycle id or its first characters (at least 4 hex digits), got "${opts.cycle}"`);
  }
  if ("tag" in which && (opts.param !== undefined || opts.paramsFile !== undefined)) {
    throw new UsageError("-p and --params-file go with one job, not --tag (each job declares its own params)", "see 'svc run --help'");
  }
  const client = await clientFor(cmd, ctx);
  if ("tag" in which) return runTag(ctx, client, which.tag, opts);
  const params = await paramsFor(client, which.job, opts, "run");
  const body: Record<string, unknown> = {};
  if (opts.reason !== undefined) body.reason = opts.reason;
  if (params !== undefined) body.params = params;
  if (opts.cycle !== undefined) body.cycle_id = opts.cycle;
  const res = await forJob(which.job, () => client.post<StartedRun>(jobPath(which.job, "/run"), Object.keys(body).length > 0 ? body : undefined));
  await reportStarted(ctx, client, { job: which.job, ...res }, { ...opts, verb: opts.cycle !== undefined ? "started (joining an earlier cycle)" : "started" });
}

/** Prints what was started; with --wait follows the run and fails unless it ends SUCCESS. */
async function reportStarted(ctx: CliContext, client: DaemonClient, s: Started, opts: { wait?: boolean; json?: boolean; verb: string }): Promise<void> {
  // A run recorded SKIPPED at once never started (concurrency: forbid): said as such, exit 1.
  if (s.status === "SKIPPED") {
    const why = await notStarted(client, s);
    if (opts.json) printJson(ctx.output, s);
    throw new CliError(why);
  }
  if (!opts.wait) {
    if (opts.json) return printJson(ctx.output, s);
    confirm(ctx, startedLine(opts.verb, s, styleFor(ctx)));
    return;
  }
  // With --wait the log is the output; what happened goes to stderr, so stdout stays the job's own.
  if (!opts.json) note(ctx, `${startedLine(opts.verb, s, null)}; following its log`);
  const printer = opts.json ? null : new LogPrinter(ctx, { includeHealthcheck: false, prefix: false }, [s.job]);
  const [final] = await followUntilDone(client, printer, [{ job: s.job, runId: s.run_id }]);
  if (opts.json) printJson(ctx.output, final);
  else note(ctx, runSummary(final!));
  if (final!.status !== "SUCCESS") throw new CliError("");
}

/**
 * `svc run --tag T`: the daemon triggers the tag's root jobs in one new cycle
 * and the rest follow them by dependency triggering (POST /api/jobs/run).
 * With --wait, every run of that cycle is followed, including the ones
 * created as it goes, until the cycle settles; exit 0 only when every run
 * in it ended SUCCESS.
 */
async function runTag(ctx: CliContext, client: DaemonClient, tag: string, opts: RunOpts): Promise<void> {
  const res = await client.post<TagRun>("/api/jobs/run", { tag, ...(opts.reason !== undefined ? { reason: opts.reason } : {}) });
  const style = styleFor(ctx);
  const skipped = res.runs.filter((r) => r.status === "SKIPPED");
  const refusals: string[] = [];
  for (const r of skipped) refusals.push(await notStarted(client, r));
  if (!opts.json) {
    // With --wait the logs are the output: what was started goes to stderr.
    for (const r of res.runs) {
      if (r.status === "SKIPPED") continue;
      if (opts.wait) note(ctx, startedLine("started", r, null));
      else confirm(ctx, startedLine("started", r, style));
    }
    if (res.follow.length > 0) note(ctx, `then, in cycle ${res.cycle_id}: ${res.follow.join(", ")} (each when its upstreams succeed)`);
    for (const n of res.not_triggered) note(ctx, `not run: ${n.why}`);
  }
  for (const why of refusals) ctx.output.err(`svc: ${why}\n`);
  if (!opts.wait) {
    if (opts.json) printJson(ctx.output, res);
    if (refusals.length > 0) throw new CliError(`${refusals.length} of ${res.runs.length} root runs did not start`);
    return;
  }
  const names = [...res.runs.map((r) => r.job), ...res.follow];
  const printer = opts.json ? null : new LogPrinter(ctx, { includeHealthcheck: false, prefix: true }, names);
  const cycle = await followCycle(client, printer, res.cycle_id);
  if (opts.json) printJson(ctx.output, { ...res, runs: cycle.runs, waiting: cycle.waiting });
  else {
    for (const r of cycle.runs) note(ctx, runSummary(r));
    for (const w of cycle.waiting) note(ctx, `run ${w.run_id} of ${w.job} is still PENDING: ${w.blocked_by.map((b) => b.text).join("; ")} (\`svc skip ${w.job}\` drops it)`);
  }
  const bad = cycle.runs.filter((r) => r.status !== "SUCCESS");
  if (bad.length > 0) {
    throw new CliError(`${bad.length} of ${cycle.runs.length} runs in cycle ${res.cycle_id} did not succeed${cycle.waiting.length > 0 ? ` (${cycle.waiting.length} still PENDING)` : ""}`);
  }
}

interface TagRun {
  tag: string;
  cycle_id: string;
  runs: Started[];
  follow: string[];
  not_triggered: { job: string; why: string }[];
}

type Started = StartedRun & { job: string; retry_of?: number };

/** `started run 42 of extract (PENDING, cycle ...)`; a retry names the run it retries. */
function startedLine(verb: string, s: Started, style: Style | null): string {
  const what = s.retry_of !== undefined ? `run ${s.retry_of} of ${s.job} as run ${s.run_id}` : `run ${s.run_id} of ${s.job}`;
  return `${verb} ${what} (${style ? statusText(style, s.status) : s.status}, cycle ${s.cycle_id})`;
}

/**
 * Why a run recorded SKIPPED at once did not start: `not started: run 9 is
 * still running (concurrency: forbid)`. The API answers such a trigger with
 * 202 and `status: SKIPPED` (CONTRACT §3); the CLI must not make it look
 * like a start.
 */
async function notStarted(client: DaemonClient, s: Started): Promise<string> {
  const run = await client.get<RunRecord>(`/api/runs/${s.run_id}`);
  if (run.error?.startsWith("concurrency forbid")) {
    const detail = await client.get<JobDetail>(jobPath(s.job), { runs: 0, next: 0 });
    const busy = detail.active_runs.filter((r) => r.status !== "PENDING").map((r) => r.id);
    const who =
      busy.length === 0
        ? `another run of ${s.job} was still running`
        : `run${busy.length > 1 ? "s" : ""} ${busy.join(", ")} ${busy.length > 1 ? "are" : "is"} still running`;
    return `not started: ${who} (concurrency: forbid); run ${s.run_id} of ${s.job} is recorded SKIPPED`;
  }
  return `not started: run ${s.run_id} of ${s.job} is recorded SKIPPED${run.error ? ` (${run.error})` : ""}`;
}

/** `run 42 of extract: FAILED (exit 3, 1.2s): timeout after 5s`. */
export function runSummary(r: RunRecord): string {
  const exit = r.exit_code === null ? "no exit code" : `exit ${r.exit_code}`;
  const error = r.error && r.error !== `exit code ${r.exit_code}` ? `: ${r.error}` : "";
  return `run ${r.id} of ${r.job_name}: ${r.status} (${exit}, ${duration(r.duration_ms)})${error}`;
}
