/**
 * Printing run logs, one run or many at once. Several jobs are shown like
 * `docker compose logs -f`: each line prefixed by its job name, padded to
 * the longest name, in a colour per job on a terminal. Lines the job wrote
 * to stderr are marked `[stderr] ` (and red on a terminal). Healthcheck
 * lines are hidden unless asked for (CONTRACT §4), and marked when shown.
 */
import type { CliContext } from "../context.js";
import { CliError } from "../output.js";
import type { DaemonClient } from "./http.js";
import { followRun, type LogLine, type RunFollower } from "./logSocket.js";
import { styleFor, type Style } from "./present.js";
import { TERMINAL, type AuditAnswer, type JobsAnswer, type JobSummary, type LogPage, type RunRecord } from "./types.js";

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

  /** Healthcheck lines hidden unless asked for; stderr and healthcheck lines marked (`[stderr] `, red on a terminal). */
  line(job: string, l: { stream: string; line: string }): void {
    if (l.stream === "healthcheck" && !this.opts.includeHealthcheck) return;
    const text = l.stream === "stderr" ? this.style.red(`[stderr] ${l.line}`) : l.stream === "healthcheck" ? `[healthcheck] ${l.line}` : l.line;
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
  /** Lines up to this seq were already printed. */
  afterSeq?: number;
}

/**
 * Follows each run until it ends (`run --wait`, `logs --tail`); resolves
 * with the final run records, in the given order. The first failure stops
 * every stream and rejects.
 */
export async function followUntilDone(client: DaemonClient, printer: LogPrinter | null, runs: StartedRunRef[]): Promise<RunRecord[]> {
  const followers: RunFollower[] = runs.map((r) => followRun(client, r.runId, (l: LogLine) => printer?.line(r.job, l), r.afterSeq ?? 0));
  try {
    await Promise.all(followers.map((f) => f.done));
  } catch (e) {
    for (const f of followers) f.close();
    throw e;
  }
  return Promise.all(runs.map((r) => client.get<RunRecord>(`/api/runs/${r.runId}`)));
}

/** `GET /api/cycles/:id`. */
export interface CycleAnswer {
  cycle_id: string;
  runs: RunRecord[];
  settled: boolean;
  waiting: { run_id: number; job: string; blocked_by: { job: string; kind: string; text: string }[] }[];
}

const CYCLE_POLL_MS = 500;

/**
 * Follows every run of a cycle, the ones created as it goes included
 * (dependency-triggered runs appear when their upstream succeeds), until the
 * cycle settles (nothing in it can move on by itself). Each run's log is
 * streamed and ends with a `--- run N STATUS ---` note. Resolves with the
 * settled cycle; a lost daemon rejects.
 */
export async function followCycle(client: DaemonClient, printer: LogPrinter | null, cycleId: string): Promise<CycleAnswer> {
  const followers = new Map<number, RunFollower>();
  let failure: ((e: unknown) => void) | null = null;
  const failed = new Promise<never>((_resolve, reject) => (failure = reject));
  failed.catch(() => {}); // observed through the race below
  try {
    for (;;) {
      const view = await Promise.race([client.get<CycleAnswer>(`/api/cycles/${cycleId}`), failed]);
      for (const r of view.runs) {
        // A PENDING run of a settled cycle waits for a person: nothing to stream.
        if (followers.has(r.id) || (view.settled && r.status === "PENDING")) continue;
        const f = followRun(client, r.id, (l) => printer?.line(r.job_name, l));
        followers.set(r.id, f);
        f.done.then((status) => printer?.note(r.job_name, `--- run ${r.id} ${status} ---`), (e: unknown) => failure?.(e));
      }
      if (view.settled) {
        // Every line of the ended runs is printed before we return.
        await Promise.race([Promise.all(view.runs.filter((r) => TERMINAL.has(r.status)).map((r) => followers.get(r.id)!.done)), failed]);
        return view;
      }
      await Promise.race([new Promise((r) => setTimeout(r, CYCLE_POLL_MS)), failed]);
    }
  } finally {
    for (const f of followers.values()) f.close();
  }
}

const TAG_POLL_MS = 500;
const AUDIT_PAGE = 100;

/** How many lines of a run to show: all, or the last N (`--tail N`). */
export type LineCount = number | "all";

const LOG_PAGE = 10_000;

/**
 * A run's stored lines in seq order: all, or the last `count` that `keep`
 * lets through (healthcheck lines hidden unless asked for), read from the end
 * back so a long log is not read whole for `--tail 20`. `lastSeq` is the
 * newest seq read, for following on from there without repeating a line.
 */
export async function storedLines(
  client: DaemonClient,
  runId: number,
  count: LineCount,
  keep: (l: LogLine) => boolean,
): Promise<{ lines: LogLine[]; lastSeq: number }> {
  const page = (limit: number, offset: number) => client.get<LogPage>(`/api/runs/${runId}/logs`, { limit, offset });
  if (count === "all") {
    const out: LogLine[] = [];
    for (let offset = 0; ; offset += LOG_PAGE) {
      const p = await page(LOG_PAGE, offset);
      out.push(...p.lines);
      if (p.lines.length < LOG_PAGE || offset + LOG_PAGE >= p.total) return { lines: out.filter(keep), lastSeq: out[out.length - 1]?.seq ?? 0 };
    }
  }
  const { total } = await page(1, 0);
  const kept: LogLine[] = [];
  let lastSeq = 0;
  let end = total;
  const size = Math.min(LOG_PAGE, Math.max(100, count * 2));
  // --tail 0: no line, but the last seq all the same (-f goes on from there, not from the start).
  while (end > 0 && (kept.length < count || lastSeq === 0)) {
    const start = Math.max(0, end - size);
    const p = await page(end - start, start);
    if (p.lines.length === 0) break;
    lastSeq = Math.max(lastSeq, p.lines[p.lines.length - 1]!.seq);
    kept.unshift(...p.lines.filter(keep));
    end = start;
  }
  return { lines: kept.slice(Math.max(0, kept.length - count)), lastSeq };
}

/** Lines of several runs, merged by time (then run, then seq): `svc logs --tag` shows what happened in order. */
export function byTime(runs: { job: string; runId: number; lines: LogLine[] }[]): { job: string; line: LogLine }[] {
  const all = runs.flatMap((r) => r.lines.map((line) => ({ job: r.job, runId: r.runId, line })));
  all.sort((a, b) => (a.line.ts < b.line.ts ? -1 : a.line.ts > b.line.ts ? 1 : a.runId - b.runId || a.line.seq - b.line.seq));
  return all.map(({ job, line }) => ({ job, line }));
}

/**
 * The latest run of every job with the tag (the one going on: its RUNNING or RETRYING runs, else its newest,
 * as `svc logs JOB` picks), their lines merged by time; with `follow`, the newest seq of each.
 */
export async function tagHistory(
  client: DaemonClient,
  jobs: JobSummary[],
  count: LineCount,
  includeHealthcheck: boolean,
): Promise<{ lines: { job: string; line: LogLine }[]; runs: { job: string; run: RunRecord; lines: LogLine[]; lastSeq: number }[] }> {
  const keep = (l: LogLine) => includeHealthcheck || l.stream !== "healthcheck";
  const runs = [];
  for (const j of jobs) {
    const going = (j.active_runs ?? []).filter((r) => r.status === "RUNNING" || r.status === "RETRYING");
    const picked = going.length > 0 ? await Promise.all(going.map((r) => client.get<RunRecord>(`/api/runs/${r.id}`))) : j.last_run ? [j.last_run] : [];
    for (const run of picked) {
      const { lines, lastSeq } = await storedLines(client, run.id, count, keep);
      runs.push({ job: j.name, run, lines, lastSeq });
    }
  }
  return { lines: byTime(runs.map((r) => ({ job: r.job, runId: r.run.id, lines: r.lines }))), runs };
}

/**
 * `svc logs --tag <tag> --tail`: the latest run of every job with the tag,
 * then every new run as it starts (found by polling `/api/audit?tag=`),
 * until interrupted. Returns only by throwing: the daemon went away.
 */
export async function tailTag(client: DaemonClient, ctx: CliContext, tag: string, includeHealthcheck: boolean, count: LineCount): Promise<never> {
  // The newest run id first, so that a run created while we list the jobs is found by the poll.
  let maxId = (await client.get<AuditAnswer>("/api/audit", { tag, limit: 1 })).runs[0]?.id ?? 0;
  const { jobs } = await client.get<JobsAnswer>("/api/jobs", { tag });
  if (jobs.length === 0) throw new CliError(`no job has the tag "${tag}" (svc tags list shows the tags)`);
  const printer = new LogPrinter(ctx, { includeHealthcheck, prefix: true }, jobs.map((j) => j.name));
  const followers = new Map<number, RunFollower>();
  // What is stored first, merged by time; the followers then go on from each run's last line.
  const history = await tagHistory(client, jobs, count, includeHealthcheck);
  for (const { job, line } of history.lines) printer.line(job, line);

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
    // Every run ever followed: a finished one listed again (still RUNNING in a poll that raced its end) is not replayed.
    const seen = new Set<number>();
    const follow = (run: RunRecord, afterSeq = 0) => {
      if (seen.has(run.id)) return;
      seen.add(run.id);
      const f = followRun(client, run.id, (l) => printer.line(run.job_name, l), afterSeq);
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
      // Older runs that start now: a backfill creates all its runs first, and they start one by one.
      const running = await client.get<AuditAnswer>("/api/audit", { tag, status: "running", limit: AUDIT_PAGE });
      for (const r of running.runs.sort((a, b) => a.id - b.id)) follow(r);
    };
    const loop = () => {
      timer = setTimeout(() => {
        poll().then(() => !failed && loop(), fail);
      }, TAG_POLL_MS);
    };
    for (const r of history.runs) follow(r.run, r.lastSeq);
    loop();
  });
}
