/**
 * Printing run logs, one run or many at once. Several jobs are shown like
 * `docker compose logs -f`: each line prefixed by its job name, padded to
 * the longest name, in a colour per job on a terminal. Healthcheck lines are
 * hidden unless asked for (CONTRACT §4), and marked when shown.
 */
import type { CliContext } from "../context.js";
import { CliError } from "../output.js";
import type { DaemonClient } from "./http.js";
import { followRun, type LogLine, type RunFollower } from "./logSocket.js";
import { styleFor, type Style } from "./present.js";
import type { AuditAnswer, JobsAnswer, RunRecord } from "./types.js";

export interface PrintOptions {
  includeHealthcheck: boolean;
  /** Prefix lines with the job name (several jobs). */
  prefix: boolean;
}

export class LogPrinter {
  private readonly style: Style;
  private readonly colours = new Map<string, number>();
  private width = 0;

  constructor(
    private readonly ctx: CliContext,
    private readonly opts: PrintOptions,
    names: string[] = [],
  ) {
    this.style = styleFor(ctx);
    for (const n of names) this.known(n);
  }

  line(job: string, l: { stream: string; line: string }): void {
    if (l.stream === "healthcheck" && !this.opts.includeHealthcheck) return;
    const text = l.stream === "healthcheck" ? `[healthcheck] ${l.line}` : l.line;
    this.ctx.output.out(`${this.prefix(job)}${text}\n`);
  }

  /** A note in the stream (`--- run 42 SUCCESS ---`), dimmed. */
  note(job: string, text: string): void {
    this.ctx.output.out(`${this.prefix(job)}${this.style.dim(text)}\n`);
  }

  private prefix(job: string): string {
    if (!this.opts.prefix) return "";
    const i = this.known(job);
    return this.style.nth(i, `${job.padEnd(this.width)} | `);
  }

  private known(job: string): number {
    let i = this.colours.get(job);
    if (i === undefined) {
      i = this.colours.size;
      this.colours.set(job, i);
      this.width = Math.max(this.width, job.length);
    }
    return i;
  }
}

export interface StartedRunRef {
  job: string;
  runId: number;
}

/**
 * Follows each run until it ends (`run --wait`, `logs --tail`); resolves
 * with the final run records, in the given order. The first failure stops
 * every stream and rejects.
 */
export async function followUntilDone(client: DaemonClient, printer: LogPrinter | null, runs: StartedRunRef[]): Promise<RunRecord[]> {
  const followers: RunFollower[] = runs.map((r) => followRun(client, r.runId, (l: LogLine) => printer?.line(r.job, l)));
  try {
    await Promise.all(followers.map((f) => f.done));
  } catch (e) {
    for (const f of followers) f.close();
    throw e;
  }
  return Promise.all(runs.map((r) => client.get<RunRecord>(`/api/runs/${r.runId}`)));
}

const TAG_POLL_MS = 500;
const AUDIT_PAGE = 100;

/**
 * `svc logs --tag <tag> --tail`: the latest run of every job with the tag,
 * then every new run as it starts (found by polling `/api/audit?tag=`),
 * until interrupted. Returns only by throwing: the daemon went away.
 */
export async function tailTag(client: DaemonClient, ctx: CliContext, tag: string, includeHealthcheck: boolean): Promise<never> {
  // The newest run id first, so that a run created while we list the jobs is found by the poll.
  let maxId = (await client.get<AuditAnswer>("/api/audit", { tag, limit: 1 })).runs[0]?.id ?? 0;
  const { jobs } = await client.get<JobsAnswer>("/api/jobs", { tag });
  if (jobs.length === 0) throw new CliError(`no job has the tag "${tag}" (svc tags list shows the tags)`);
  const printer = new LogPrinter(ctx, { includeHealthcheck, prefix: true }, jobs.map((j) => j.name));
  const followers = new Map<number, RunFollower>();

  return new Promise<never>((_resolve, reject) => {
    let timer: NodeJS.Timeout | null = null;
    let failed = false;
    const fail = (e: unknown) => {
      if (failed) return;
      failed = true;
      if (timer) clearTimeout(timer);
      for (const f of followers.values()) f.close();
      reject(e);
    };
    const follow = (run: RunRecord) => {
      if (followers.has(run.id)) return;
      const f = followRun(client, run.id, (l) => printer.line(run.job_name, l));
      followers.set(run.id, f);
      f.done.then((status) => {
        printer.note(run.job_name, `--- run ${run.id} ${status} ---`);
        followers.delete(run.id);
      }, fail);
    };
    const poll = async () => {
      const fresh: RunRecord[] = [];
      for (let offset = 0; offset < AUDIT_PAGE * 10; offset += AUDIT_PAGE) {
        const page = await client.get<AuditAnswer>("/api/audit", { tag, limit: AUDIT_PAGE, offset });
        const newer = page.runs.filter((r) => r.id > maxId);
        fresh.push(...newer);
        if (newer.length < page.runs.length || page.runs.length < AUDIT_PAGE) break;
      }
      for (const r of fresh.sort((a, b) => a.id - b.id)) {
        maxId = Math.max(maxId, r.id);
        follow(r);
      }
    };
    const loop = () => {
      timer = setTimeout(() => {
        poll().then(() => !failed && loop(), fail);
      }, TAG_POLL_MS);
    };
    for (const j of jobs) if (j.last_run) follow(j.last_run);
    loop();
  });
}
