/**
 * `svc alerts [--failed] [--status S] [--job J] [--limit N] [--json]`: the
 * notifications svc sent or tried to send (GET /api/db/alerts), newest
 * first; `svc alerts retry ID [--wait]` sends a failed one again without
 * re-running the job (POST /api/db/alerts/:id/retry).
 */
import type { Command } from "commander";
import { ApiError } from "../client/errors.js";
import type { DaemonClient } from "../client/http.js";
import { clientFor } from "../client/index.js";
import { cell, localTime, styleFor, table, type Style } from "../client/present.js";
import type { AlertRow, Slice } from "../client/types.js";
import type { CliContext } from "../context.js";
import { CliError, confirm, note, printJson, printLine, UsageError } from "../output.js";

const STATUSES = ["pending", "delivered", "failed"];
const WAIT_MS = 60_000;
const POLL_MS = 250;

interface ListOpts {
  failed?: boolean;
  status?: string;
  job?: string;
  limit: string;
  json?: boolean;
}

export function register(program: Command, ctx: CliContext): void {
  const group = program
    .command("alerts")
    .description("notifications sent or tried (newest first); `alerts retry ID` sends a failed one again")
    .addHelpText("after", "\nExamples:\n  svc alerts --failed\n  svc alerts --job extract --json\n  svc alerts retry 7 --wait");
  group
    .command("list", { isDefault: true })
    .description("the alerts, newest first (the default of `svc alerts`)")
    .option("--failed", "only alerts whose delivery failed (as --status failed)")
    .option("--status <status>", `only ${STATUSES.join(", ")}`)
    .option("--job <name>", "only alerts of this job")
    .option("--limit <n>", "how many (1-1000)", "50")
    .option("--json", 'print {"rows", "total", "limit", "offset"} as GET /api/db/alerts answers it')
    .action(async (opts: ListOpts, cmd: Command) => {
      const usage = (m: string) => new UsageError(m, "see 'svc alerts --help'");
      if (opts.failed && opts.status !== undefined && opts.status.toLowerCase() !== "failed") throw usage("--failed and --status say two things: give one");
      const status = opts.failed ? "failed" : opts.status?.toLowerCase();
      if (status !== undefined && !STATUSES.includes(status)) throw usage(`--status must be one of ${STATUSES.join(", ")}, got "${opts.status}"`);
      const limit = Number(opts.limit);
      if (!/^[0-9]+$/.test(opts.limit) || limit < 1 || limit > 1000) throw usage(`--limit must be an integer from 1 to 1000, got "${opts.limit}"`);
      const client = await clientFor(cmd, ctx);
      const answer = await client.get<Slice<AlertRow>>("/api/db/alerts", { status, job: opts.job, limit });
      if (opts.json) return printJson(ctx.output, answer);
      if (answer.rows.length === 0) return printLine(ctx.output, status ? `(no ${status} alerts)` : "(no alerts)");
      const style = styleFor(ctx);
      printLine(ctx.output, alertsTable(answer.rows, style));
      if (answer.total > answer.rows.length) printLine(ctx.output, style.dim(`${answer.rows.length} of ${answer.total} alerts (--limit for more)`));
    });

  group
    .command("retry")
    .description("send a failed alert again, without re-running the job; --wait for the outcome (exit 1 if it fails again)")
    .argument("<id>", "alert id (svc alerts --failed lists them)")
    .option("--wait", `wait for the delivery's outcome (at most ${WAIT_MS / 1000} s)`)
    .option("--json", 'print {"alert"} (with --wait: the final row)')
    .action(async (idText: string, opts: { wait?: boolean; json?: boolean }, cmd: Command) => {
      if (!/^[1-9][0-9]*$/.test(idText)) throw new UsageError(`alert id must be a positive integer, got "${idText}"`, "see 'svc alerts retry --help'");
      const client = await clientFor(cmd, ctx);
      const { alert } = await client.post<{ alert: AlertRow }>(`/api/db/alerts/${idText}/retry`).catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 404) throw new CliError(`alert ${idText} not found (svc alerts lists them)`);
        throw e;
      });
      const what = `alert ${alert.id} (${alert.event} of ${alert.job_name} to ${alert.channel})`;
      if (!opts.wait) {
        if (opts.json) return printJson(ctx.output, { alert });
        return confirm(ctx, `requeued ${what}: ${alert.status}; \`svc alerts --job ${alert.job_name}\` shows the outcome`);
      }
      note(ctx, `requeued ${what}; waiting for the delivery`);
      const final = await outcome(client, alert);
      if (opts.json) printJson(ctx.output, { alert: final });
      if (final.status === "pending") throw new CliError(`${what} is still pending after ${WAIT_MS / 1000} s`);
      if (final.status === "failed") throw new CliError(`${what} failed again: ${final.error ?? "no error recorded"}`);
      if (!opts.json) confirm(ctx, `${what} delivered (attempt ${final.attempts})`);
    });
}

/** Polls the job's alerts until this one is no longer pending (or the wait runs out). */
async function outcome(client: DaemonClient, alert: AlertRow): Promise<AlertRow> {
  const deadline = Date.now() + WAIT_MS;
  let row = alert;
  while (row.status === "pending" && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    // Newer alerts of the job come first: look far enough back to find this one.
    const page = await client.get<Slice<AlertRow>>("/api/db/alerts", { job: alert.job_name, limit: 1000 });
    row = page.rows.find((r) => r.id === alert.id) ?? row;
  }
  return row;
}

export function alertsTable(rows: AlertRow[], style: Style): string {
  const body = rows.map((a) => [
    String(a.id),
    a.job_name,
    a.run_id === null ? "-" : String(a.run_id),
    a.event,
    cell(a.channel, 40),
    a.status === "delivered" ? style.green(a.status) : a.status === "failed" ? style.red(a.status) : style.yellow(a.status),
    String(a.attempts),
    localTime(a.last_attempt_at ?? a.created_at),
    cell(a.error, 60),
  ]);
  return table(["ID", "JOB", "RUN", "EVENT", "CHANNEL", "STATUS", "ATTEMPTS", "LAST ATTEMPT", "ERROR"], body, style);
}
