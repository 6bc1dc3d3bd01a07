/**
 * `svc audit` (SPEC): searchable run history with `--job --trigger --status
 * --since --until --reason --tag`, as a table, `--json`, or `--export csv`
 * (RFC 4180, CONTRACT §1's header) to stdout or `--output FILE`.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import type { Command } from "commander";
import { clientFor } from "../client/index.js";
import { ApiError } from "../client/errors.js";
import { jobPath } from "../client/jobs.js";
import { auditCsvHeader, auditCsvRow } from "../client/csv.js";
import type { DaemonClient, Query } from "../client/http.js";
import { collectParam } from "../client/params.js";
import { styleFor } from "../client/present.js";
import { sinceUntil, WHEN_HELP } from "../client/when.js";
import type { AuditAnswer, RunRecord } from "../client/types.js";
import type { CliContext } from "../context.js";
import { checkOutputFile, CliError, printJson, printLine, UsageError } from "../output.js";
import { runsTable } from "./history.js";

interface AuditOpts {
  job?: string;
  trigger?: string;
  status?: string;
  since?: string;
  until?: string;
  reason?: string;
  tag?: string;
  param?: string[];
  limit?: string;
  offset?: string;
  json?: boolean;
  export?: string;
  output?: string;
}

const TRIGGERS = ["manual", "schedule", "dependency", "backfill"];
const STATUSES = ["pending", "running", "success", "failed", "retrying", "skipped"];
const PAGE_MAX = 1000;
const DEFAULT_LIMIT = 100;

export function register(program: Command, ctx: CliContext): void {
  program
    .command("audit")
    .description("search the run history (newest first); --export csv writes it as CSV")
    .option("--job <name>", "runs of this job")
    .option("--trigger <trigger>", `how runs started: ${TRIGGERS.join(", ")}`)
    .option("--status <status>", `run status: ${STATUSES.join(", ")}`)
    .option("--since <when>", `created at or after: ${WHEN_HELP}`)
    .option("--until <when>", `created at or before: ${WHEN_HELP}`)
    .option("--reason <text>", "reason contains this text (any case)")
    .option("--tag <tag>", "runs of jobs with this tag")
    .option("--param <name=value>", "runs whose param has this value (repeatable; secret params never match)", collectParam)
    .option("--limit <n>", `how many runs (table and --json: default ${DEFAULT_LIMIT}; --export: all)`)
    .option("--offset <n>", "skip this many runs first", "0")
    .option("--json", 'print {"runs", "total", "limit", "offset"}')
    .option("--export <format>", "write every matching run as csv (RFC 4180)")
    .option("--output <file>", "with --export: write to this file instead of stdout")
    .addHelpText(
      "after",
      '\nExamples:\n  svc audit --job extract --status failed --since 2026-11-01\n  svc audit --status failed --since yesterday\n  svc audit --since 1h\n  svc audit --reason "backfill" --export csv --output audit.csv\n  svc audit --job report --param day=2026-11-01 --trigger backfill',
    )
    .action((opts: AuditOpts, cmd: Command) => audit(ctx, cmd, opts));
}

async function audit(ctx: CliContext, cmd: Command, opts: AuditOpts): Promise<void> {
  const usage = (m: string) => new UsageError(m, "see 'svc audit --help'");
  if (opts.export !== undefined && opts.export.toLowerCase() !== "csv") throw usage(`--export supports csv, got "${opts.export}"`);
  if (opts.output !== undefined && opts.export === undefined) throw usage("--output goes with --export csv");
  if (opts.export !== undefined && opts.json) throw usage("--json and --export are two output formats: pick one");
  if (opts.trigger !== undefined && !TRIGGERS.includes(opts.trigger.toLowerCase())) throw usage(`--trigger must be one of ${TRIGGERS.join(", ")}, got "${opts.trigger}"`);
  if (opts.status !== undefined && !STATUSES.includes(opts.status.toLowerCase())) throw usage(`--status must be one of ${STATUSES.join(", ")}, got "${opts.status}"`);
  for (const p of opts.param ?? []) {
    if (!/^[a-z_][a-z0-9_]*=/.test(p)) throw usage(`--param takes name=value with a param name like day or max_rows, got "${p}"`);
  }
  const { since, until } = sinceUntil(opts, usage, new Date());
  const limit = opts.limit === undefined ? undefined : count("--limit", opts.limit, 1);
  const offset = count("--offset", opts.offset ?? "0", 0);

  const filters: Query = {
    job: opts.job,
    trigger: opts.trigger?.toLowerCase(),
    status: opts.status?.toUpperCase(),
    since,
    until,
    reason: opts.reason,
    tag: opts.tag,
    param: opts.param,
  };
  // Checked before the daemon is asked: a path that cannot be written fails at once (the file is
  // opened, and emptied, only once the daemon answers).
  const path = opts.export !== undefined && opts.output !== undefined ? checkOutputFile(ctx.cwd, opts.output) : null;
  const client = await clientFor(cmd, ctx);

  if (opts.export !== undefined) {
    const out = path === null ? null : openSync(path, "w", 0o600);
    const write = (text: string) => (out === null ? ctx.output.out(text) : writeSync(out, text));
    let n = 0;
    try {
      write(auditCsvHeader());
      for await (const run of allRuns(client, filters, offset, limit)) {
        write(auditCsvRow(run));
        n++;
      }
      if (out !== null) ctx.output.err(`svc: wrote ${n} run${n === 1 ? "" : "s"} to ${opts.output}\n`);
    } finally {
      if (out !== null) closeSync(out);
    }
    if (n === 0 && opts.job !== undefined) await checkJobKnown(client, opts.job);
    return;
  }

  const answer = await client.get<AuditAnswer>("/api/audit", { ...filters, limit: Math.min(limit ?? DEFAULT_LIMIT, PAGE_MAX), offset });
  if (answer.total === 0 && opts.job !== undefined) await checkJobKnown(client, opts.job);
  if (opts.json) return printJson(ctx.output, answer);
  if (answer.runs.length === 0) return printLine(ctx.output, answer.total === 0 ? "(no runs match)" : `(no runs past offset ${offset}; ${answer.total} match)`);
  const style = styleFor(ctx);
  printLine(ctx.output, runsTable(answer.runs, style, true));
  const shown = `${offset + 1}-${offset + answer.runs.length} of ${answer.total} runs`;
  printLine(ctx.output, style.dim(answer.runs.length < answer.total ? `${shown} (--limit and --offset for more)` : shown));
}

/**
 * Nothing matched `--job NAME`: a name that is neither in svc.yaml nor in the
 * history is a typo, an error (exit 1) instead of "(no runs match)". A job
 * removed from svc.yaml keeps its history here, so it is known while it has runs.
 */
async function checkJobKnown(client: DaemonClient, job: string): Promise<void> {
  try {
    await client.get(jobPath(job), { runs: 0, next: 0 });
    return;
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 404)) throw e;
  }
  const any = await client.get<AuditAnswer>("/api/audit", { job, limit: 1 });
  if (any.total === 0) throw new CliError(`unknown job "${job}": it is not in svc.yaml and has no runs in the history (svc status lists the jobs)`);
}

/**
 * Every matching run, newest first, in pages of 1000. `until` is pinned to
 * the first page's time so that runs created meanwhile do not shift pages.
 */
async function* allRuns(client: DaemonClient, filters: Query, offset: number, limit: number | undefined): AsyncGenerator<RunRecord> {
  const pinned: Query = { ...filters, until: filters.until ?? new Date().toISOString() };
  let left = limit ?? Number.POSITIVE_INFINITY;
  for (let at = offset; left > 0; ) {
    const page = await client.get<AuditAnswer>("/api/audit", { ...pinned, limit: Math.min(PAGE_MAX, left), offset: at });
    for (const r of page.runs) yield r;
    at += page.runs.length;
    left -= page.runs.length;
    if (page.runs.length === 0 || at >= page.total) return;
  }
}

function count(flag: string, text: string, min: number): number {
  if (!/^[0-9]+$/.test(text) || Number(text) < min) {
    throw new UsageError(`${flag} must be an integer of at least ${min}, got "${text}"`, "see 'svc audit --help'");
  }
  return Number(text);
}
