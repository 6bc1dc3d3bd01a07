/**
 * `svc why JOB [--json]`: why a job is not running, or did not run when
 * expected (paused, upstream failed or skipped, gate waiting, excluded date,
 * concurrency, never scheduled, daemon down at the time), from the records the
 * daemon has (`GET /api/jobs/:name/why`): its runs, its upstreams' runs in
 * their latest cycle, and the traces runs that did not happen leave
 * (non_runs).
 */
import type { Command } from "commander";
import { clientFor } from "../client/index.js";
import { forJob, jobPath } from "../client/jobs.js";
import { cell, localTime, styleFor, table, type Style } from "../client/present.js";
import type { RunRecord } from "../client/types.js";
import type { CliContext } from "../context.js";
import { printJson, printLine } from "../output.js";

export interface NonRun {
  id: number;
  reason: string;
  detail: string;
  cycle_id: string | null;
  first_slot: string | null;
  last_slot: string | null;
  count: number;
  first_at: string;
  last_at: string;
}

export interface WhyAnswer {
  job: string;
  frequency: string;
  paused: boolean;
  summary: string;
  reasons: { code: string; text: string; hint: string | null; at: string | null; run_id: number | null; cycle_id: string | null }[];
  last_run: RunRecord | null;
  next_run: string | null;
  non_runs: NonRun[];
}

export function register(program: Command, ctx: CliContext): void {
  program
    .command("why")
    .description("why a job is not running, or did not run when expected, from the daemon's records")
    .argument("<job>", "job name")
    .option("--json", "print GET /api/jobs/:name/why's answer")
    .addHelpText("after", "\nExamples:\n  svc why load\n  svc why backup --json")
    .action(async (job: string, opts: { json?: boolean }, cmd: Command) => {
      const client = await clientFor(cmd, ctx);
      const answer = await forJob(job, () => client.get<WhyAnswer>(jobPath(job, "/why")));
      if (opts.json) return printJson(ctx.output, answer);
      printLine(ctx.output, describeWhy(answer, styleFor(ctx)));
    });
}

export function describeWhy(a: WhyAnswer, style: Style): string {
  const out: string[] = [`${style.bold(a.job)} (${a.frequency}${a.paused ? ", paused" : ""}): ${a.summary}`];
  const first = a.reasons[0];
  if (first?.hint) out.push(`  fix: ${first.hint}`);
  for (const r of a.reasons.slice(1)) {
    out.push(`  also: ${r.text}`);
    if (r.hint) out.push(`    fix: ${r.hint}`);
  }
  const last = a.last_run;
  out.push(`  last run: ${last ? `${last.id} ${last.status} ${localTime(last.finished_at ?? last.started_at ?? last.created_at)}` : "never"}`);
  if (a.next_run) out.push(`  next run: ${localTime(a.next_run)}`);
  if (a.non_runs.length > 0) {
    out.push("", "runs that did not happen (newest first):");
    const rows = a.non_runs.map((n) => [
      localTime(n.last_at),
      n.reason,
      n.count > 1 ? `${n.count} slots since ${localTime(n.first_slot)}` : n.first_slot ? `slot ${localTime(n.first_slot)}` : `cycle ${(n.cycle_id ?? "").slice(0, 8)}`,
      cell(n.detail, 80),
    ]);
    out.push(table(["RECORDED", "REASON", "WHICH", "DETAIL"], rows, style));
  }
  return out.join("\n");
}
