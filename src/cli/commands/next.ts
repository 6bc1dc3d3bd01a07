/**
 * `svc next <job> [--count N] [--from ISO] [--all] [--json]` (CONTRACT §1,
 * §7.1): the job's next scheduled instants, computed offline by the
 * daemon's own schedule code, each in UTC and in the job's zone, with DST
 * notes. `--all` also lists the slots `exclude` removes, with the reason.
 */
import type { Command } from "commander";
import { globalsOf, type CliContext } from "../context.js";
import { CliError, printJson, printLine, UsageError } from "../output.js";
import { parseInstant } from "../../shared/instant.js";

const MAX_COUNT = 1000;

export function register(program: Command, ctx: CliContext): void {
  program
    .command("next")
    .description("preview a job's next scheduled runs (UTC and local time, DST notes)")
    .argument("<job>", "job name")
    .option("--count <n>", `how many runs (1-${MAX_COUNT})`, "5")
    .option("--from <instant>", "start after this ISO-8601 instant (default: now)")
    .option("--all", "also list the slots that exclude removes, with the reason")
    .option("--json", 'print {"job", "timezone", "runs": [{"utc", "local", "note"}]} ("excluded" too with --all)')
    .action(async (name: string, opts: { count: string; from?: string; all?: boolean; json?: boolean }, cmd: Command) => {
      const count = parseCount(opts.count);
      const from = opts.from === undefined ? Date.now() : instantOption(opts.from);
      const { requireProject } = await import("../configFiles.js");
      const project = requireProject(ctx, globalsOf(cmd));
      const job = project.jobs.get(name);
      if (!job) throw new CliError(`unknown job "${name}" (svc dag lists the jobs)`);

      // Loaded on use: the schedule code pulls in luxon (262 KB), which other commands do not need.
      const { nextRuns, nextSlots } = await import("../../schedule/nextRun.js");
      const runs = opts.all ? nextSlots(job.schedule, from, count) : nextRuns(job.schedule, from, count).map((r) => ({ ...r, excluded: null }));
      if (opts.json) {
        printJson(ctx.output, {
          job: job.name,
          timezone: job.schedule.timezone,
          runs: runs.map((r) => ({ utc: r.utc, local: r.local, note: r.note, ...(opts.all ? { excluded: r.excluded } : {}) })),
        });
        return;
      }
      if (runs.length === 0) {
        const kind = job.schedule.frequency;
        if (kind === "after" || kind === "manual") {
          printLine(ctx.output, `${job.name} has no schedule (${kind === "after" ? "it runs after its upstream jobs succeed" : "frequency manual"})`);
        } else {
          printLine(ctx.output, `${job.name}: no slot runs: exclude removes every one for at least 10 years (svc next ${job.name} --all lists them)`);
        }
        return;
      }
      for (const r of runs) {
        const excluded = r.excluded === null ? "" : `  excluded: ${r.excluded}`;
        printLine(ctx.output, `${r.utc}  ${r.local}${r.note === null ? "" : `  (${r.note})`}${excluded}`);
      }
    });
}

function parseCount(text: string): number {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < 1 || n > MAX_COUNT) {
    throw new UsageError(`--count must be an integer from 1 to ${MAX_COUNT}, got "${text}"`, "see 'svc next --help'");
  }
  return n;
}

function instantOption(text: string): number {
  // A date alone is UTC midnight; a date-time needs Z or an offset to be an instant.
  const ms = parseInstant(text);
  if (ms === null) {
    throw new UsageError(`--from must be an ISO-8601 instant like 2027-03-14T06:00:00Z, got "${text}"`, "see 'svc next --help'");
  }
  return ms;
}
