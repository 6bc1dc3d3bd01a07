/**
 * `svc backfill JOB --from --to [--dry-run] [--rerun] [--parallel N]
 * [-p k=v] [--params-file F] [--reason T] [--ignore-exclude] [--wait]
 * [--json]` (CONTRACT §7.3), and `svc backfills [--job J]`,
 * `svc backfills show ID [--wait]`, `svc backfills cancel ID`.
 * `--wait` follows the backfill until no run of it waits or runs: a progress
 * bar on a TTY (cli-progress), one plain line per change otherwise; exit 1
 * unless every run of it ended SUCCESS.
 */
import type { SingleBar } from "cli-progress";
import type { Command } from "commander";
import { clientFor } from "../client/index.js";
import type { DaemonClient } from "../client/http.js";
import { forJob, jobPath } from "../client/jobs.js";
import { paramOptions, paramsFor, type ParamOpts } from "../client/params.js";
import { styleFor, table } from "../client/present.js";
import type { CliContext } from "../context.js";
import { CliError, printJson, printLine, processOutput, UsageError } from "../output.js";
import type { BackfillPlan } from "../../engine/backfill.js";
import { parseInstant } from "../../shared/instant.js";

const POLL_MS = 500;

interface Backfill {
  id: number;
  job: string;
  from: string;
  to: string;
  total: number;
  by_status: Record<"PENDING" | "RUNNING" | "SUCCESS" | "FAILED" | "RETRYING" | "SKIPPED", number>;
  done: boolean;
  cancelled: boolean;
  created_at: string;
  reason: string | null;
  parallel: number;
}

/** A dry run's answer: the engine's plan without its params. */
type PlanShown = Pick<BackfillPlan, "job" | "timezone" | "slots" | "runs"> & { after_now?: number };

interface BackfillOpts extends ParamOpts {
  from?: string;
  to?: string;
  dryRun?: boolean;
  rerun?: boolean;
  parallel?: string;
  reason?: string;
  ignoreExclude?: boolean;
  wait?: boolean;
  json?: boolean;
}

export function register(program: Command, ctx: CliContext): void {
  const cmd = program
    .command("backfill")
    .description("run a job for its scheduled slots in [--from, --to), oldest first (each run sees its slot as $SVC_SCHEDULED_AT)")
    .argument("<job>", "job name")
    .requiredOption("--from <instant>", "first instant of the range, included (2026-11-01 or 2026-11-01T06:00:00Z)")
    .requiredOption("--to <instant>", "end of the range, excluded")
    .option("--dry-run", "list the slots (with DST notes, existing runs, exclusions) and create nothing")
    .option("--rerun", "also run slots that already have a run of the job")
    .option("--parallel <n>", "runs of the backfill at once (1-100)", "1")
    .option("--reason <text>", "why (kept with each run, searchable with svc audit --reason)")
    .option("--ignore-exclude", "also run the slots the job's exclude removes");
  paramOptions(cmd)
    .option("--wait", "follow it until it is done (a progress bar on a terminal); exit 1 unless every run succeeded")
    .option("--json", "print the daemon's answer (with --wait: the final backfill record)")
    .addHelpText("after", "\nExamples:\n  svc backfill nightly --from 2026-11-01 --to 2026-11-08 --dry-run\n  svc backfill report --from 2026-11-01 --to 2026-12-01 -p region=eu --parallel 2 --wait")
    .action((job: string, opts: BackfillOpts, c: Command) => backfill(ctx, c, job, opts));

  const list = program
    .command("backfills")
    .description("list backfills, newest first (show ID, cancel ID)")
    .option("--job <name>", "backfills of this job")
    .option("--json", 'print {"backfills", "total", "limit", "offset"}')
    .action(async (opts: { job?: string; json?: boolean }, c: Command) => {
      const client = await clientFor(c, ctx);
      const res = await client.get<{ backfills: Backfill[]; total: number }>("/api/backfills", { job: opts.job });
      if (opts.json) return printJson(ctx.output, res);
      if (res.backfills.length === 0) return printLine(ctx.output, "(no backfills)");
      const style = styleFor(ctx);
      printLine(
        ctx.output,
        table(
          ["ID", "JOB", "FROM", "TO", "RUNS", "DONE", "FAILED", "STATE"],
          res.backfills.map((b) => [String(b.id), b.job, b.from, b.to, String(b.total), String(finished(b)), String(b.by_status.FAILED), stateOf(b)]),
          style,
        ),
      );
    });
  list
    .command("show")
    .description("one backfill: its range and its runs by status")
    .argument("<id>", "backfill id")
    .option("--wait", "follow it until it is done; exit 1 unless every run succeeded")
    .option("--json", "print the backfill record")
    .action(async (id: string, opts: { wait?: boolean; json?: boolean }, c: Command) => {
      const client = await clientFor(c, ctx);
      const b = await getBackfill(client, backfillId(id));
      if (opts.wait) return follow(ctx, client, b, opts.json === true);
      if (opts.json) return printJson(ctx.output, b);
      printLine(ctx.output, describe(b));
    });
  list
    .command("cancel")
    .description("cancel a backfill: its waiting runs end SKIPPED, running ones finish")
    .argument("<id>", "backfill id")
    .option("--json", 'print {"backfill", "skipped"}')
    .action(async (id: string, opts: { json?: boolean }, c: Command) => {
      const client = await clientFor(c, ctx);
      const res = await client.post<{ backfill: Backfill; skipped: number }>(`/api/backfills/${backfillId(id)}/cancel`);
      if (opts.json) return printJson(ctx.output, res);
      printLine(ctx.output, `cancelled backfill ${res.backfill.id} of ${res.backfill.job}: ${res.skipped} waiting run${res.skipped === 1 ? "" : "s"} skipped`);
    });
}

async function backfill(ctx: CliContext, cmd: Command, job: string, opts: BackfillOpts): Promise<void> {
  const usage = (m: string) => new UsageError(m, "see 'svc backfill --help'");
  for (const [flag, v] of [["--from", opts.from], ["--to", opts.to]] as const) {
    if (v !== undefined && parseInstant(v) === null) throw usage(`${flag} must be an ISO-8601 date or instant with a zone, like 2026-11-01 or 2026-11-01T06:00:00Z, got "${v}"`);
  }
  const parallel = Number(opts.parallel ?? "1");
  if (!/^[0-9]+$/.test(opts.parallel ?? "1") || parallel < 1 || parallel > 100) throw usage(`--parallel must be an integer from 1 to 100, got "${opts.parallel}"`);
  if (opts.dryRun && opts.wait) throw usage("--dry-run creates nothing to --wait for");
  const client = await clientFor(cmd, ctx);
  const params = await paramsFor(client, job, opts, "backfill");
  const body = {
    from: opts.from,
    to: opts.to,
    reason: opts.reason,
    params,
    rerun: opts.rerun === true,
    parallel,
    dry_run: opts.dryRun === true,
    ignore_exclude: opts.ignoreExclude === true,
  };
  const res = await forJob(job, () => client.post<Record<string, unknown>>(jobPath(job, "/backfill"), body));
  if (opts.dryRun) {
    if (opts.json) return printJson(ctx.output, res);
    return printPlan(ctx, res as unknown as PlanShown);
  }
  const started = res as unknown as { backfill_id: number; slots: number; runs: number; existing: number; excluded: number; after_now?: number; backfill: Backfill };
  if (!opts.wait) {
    if (opts.json) return printJson(ctx.output, started);
    return printLine(ctx.output, startedLine(job, started));
  }
  if (!opts.json) ctx.output.err(`svc: ${startedLine(job, started)}\n`);
  await follow(ctx, client, started.backfill, opts.json === true);
}

function startedLine(job: string, s: { backfill_id: number; slots: number; runs: number; existing: number; excluded: number; after_now?: number }): string {
  const left = [s.existing ? `${s.existing} left alone (they have runs; --rerun runs them again)` : "", s.excluded ? `${s.excluded} excluded` : ""].filter((x) => x);
  return `backfill ${s.backfill_id} of ${job}: ${s.runs} run${s.runs === 1 ? "" : "s"} for ${s.slots} slot${s.slots === 1 ? "" : "s"}${left.length ? ` (${left.join(", ")})` : ""}${afterNow(s.after_now)}`;
}

/** The note on slots of the range still ahead, which the backfill left to the scheduler. */
function afterNow(n: number | undefined): string {
  if (!n) return "";
  return `; ${n >= 10_000 ? "10,000 or more" : n} later slot${n === 1 ? "" : "s"} of the range ${n === 1 ? "is" : "are"} still ahead and left to the scheduler`;
}

/** The dry run: one line per slot, as svc next prints them, with what the backfill does. */
function printPlan(ctx: CliContext, plan: PlanShown): void {
  for (const s of plan.slots) {
    const what = s.will_run
      ? s.existing_run === null
        ? "run"
        : `run again (has run ${s.existing_run})`
      : s.existing_run !== null
        ? `left alone: has run ${s.existing_run}`
        : `excluded: ${s.excluded}`;
    printLine(ctx.output, `${s.utc}  ${s.local}${s.note === null ? "" : `  (${s.note})`}  ${what}`);
  }
  printLine(ctx.output, `${plan.slots.length} slot${plan.slots.length === 1 ? "" : "s"} of ${plan.job} (${plan.timezone}); ${plan.runs} would run${afterNow(plan.after_now)}`);
}

function finished(b: Backfill): number {
  return b.by_status.SUCCESS + b.by_status.FAILED + b.by_status.SKIPPED;
}

function stateOf(b: Backfill): string {
  if (b.cancelled) return b.done ? "cancelled" : "cancelling";
  return b.done ? "done" : `running (${b.by_status.RUNNING + b.by_status.RETRYING} now)`;
}

function describe(b: Backfill): string {
  const s = b.by_status;
  return (
    `backfill ${b.id} of ${b.job}: [${b.from}, ${b.to}), ${b.total} runs, parallel ${b.parallel}, ${stateOf(b)}\n` +
    `  ${s.SUCCESS} succeeded, ${s.FAILED} failed, ${s.SKIPPED} skipped, ${s.RUNNING} running, ${s.RETRYING} retrying, ${s.PENDING} waiting` +
    (b.reason ? `\n  reason: ${b.reason}` : "")
  );
}

function backfillId(text: string): number {
  if (!/^[1-9][0-9]*$/.test(text)) throw new UsageError(`a backfill id is a positive integer, got "${text}"`, "see 'svc backfills --help'");
  return Number(text);
}

async function getBackfill(client: DaemonClient, id: number): Promise<Backfill> {
  return client.get<Backfill>(`/api/backfills/${id}`);
}

/**
 * Polls the backfill until done. On a TTY a cli-progress bar (finished / total, the counts);
 * otherwise one line each time the counts change. Fails (exit 1) unless every run succeeded.
 */
async function follow(ctx: CliContext, client: DaemonClient, first: Backfill, json: boolean): Promise<void> {
  // A bar only where a person watches: our own stderr on a terminal.
  const tty = !json && ctx.output === processOutput && process.stderr.isTTY === true && ctx.env.TERM !== "dumb";
  let b = first;
  let bar: SingleBar | null = null;
  if (tty) {
    // Loaded on use: only a watched --wait needs it.
    const { default: progress } = await import("cli-progress");
    bar = new progress.SingleBar(
      { format: `backfill ${b.id} of ${b.job} [{bar}] {value}/{total} | {ok} ok, {failed} failed, {running} running`, hideCursor: true, stream: process.stderr },
      progress.Presets.shades_classic,
    );
    bar.start(b.total, finished(b), counts(b));
  }
  // Ctrl-C (or a TERM) while the bar shows: the terminal gets its cursor and line wrap back, then svc
  // exits as the signal would have made it (the backfill goes on in the daemon).
  const interrupted = (signal: NodeJS.Signals) => {
    bar?.stop();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  if (bar) for (const s of ["SIGINT", "SIGTERM"] as const) process.once(s, interrupted);
  let last = "";
  try {
    for (;;) {
      if (bar) bar.update(finished(b), counts(b));
      else if (!json) {
        const line = `svc: backfill ${b.id} of ${b.job}: ${finished(b)}/${b.total} done (${b.by_status.SUCCESS} ok, ${b.by_status.FAILED} failed, ${b.by_status.SKIPPED} skipped), ${b.by_status.RUNNING + b.by_status.RETRYING} running`;
        if (line !== last) ctx.output.err(`${line}\n`);
        last = line;
      }
      if (b.done) break;
      await new Promise((r) => setTimeout(r, POLL_MS));
      b = await getBackfill(client, b.id);
    }
  } finally {
    // Also when the daemon went away: the terminal gets its cursor and line wrap back.
    bar?.stop();
    for (const s of ["SIGINT", "SIGTERM"] as const) process.removeListener(s, interrupted);
  }
  if (json) printJson(ctx.output, b);
  else ctx.output.err(`svc: ${describe(b).replace(/\n {2}/g, "; ")}\n`);
  if (b.by_status.SUCCESS !== b.total) {
    throw new CliError(json ? "" : `backfill ${b.id}: ${b.total - b.by_status.SUCCESS} of ${b.total} runs did not succeed (svc audit --trigger backfill --job ${b.job})`);
  }
}

function counts(b: Backfill): Record<string, number> {
  return { ok: b.by_status.SUCCESS, failed: b.by_status.FAILED + b.by_status.SKIPPED, running: b.by_status.RUNNING + b.by_status.RETRYING };
}
