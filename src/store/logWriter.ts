import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";
import { NotFoundError } from "./errors.js";
import type { Db, Stmt } from "./sql.js";
import { normStream } from "./sql.js";
import type { LinesWritten } from "./api.js";
import type { LogLine, LogStream } from "./types.js";

export interface LogWriterOptions {
  flushLines: number;
  flushMs: number;
  logger: Logger;
  /** After each commit, with the highest run_logs.id written (feeds the FTS indexer). */
  onCommitted(lastId: number): void;
}

/** How many runs' next seq we remember; past this the map is rebuilt from the table on demand. */
const MAX_TRACKED_RUNS = 4_096;
const RETRY_MS = 1_000;
/** While writes fail, at most this many flush batches are held in memory before append throws. */
const MAX_BUFFERED_BATCHES = 100;

/** The run's last span, extended in place while its lines stay contiguous. */
interface Span {
  firstSeq: number;
  lastSeq: number;
  firstId: number;
}

/**
 * The log ingestion path. `append` assigns seq synchronously and buffers;
 * the buffer is written in one transaction when `flushLines` lines are
 * waiting or `flushMs` after the first of them. Listeners get the lines
 * after the commit, in append order: that is the acknowledged point, the
 * WebSocket only sends lines it got here.
 *
 * seq per run is kept in memory, initialised from the run's last span the
 * first time the run is seen, so it continues across restarts without gap
 * or duplicate. The map is only ever dropped right after a successful
 * flush, when every assigned seq is in the table.
 *
 * A flush writes each run's lines of the batch back to back (per-run order
 * kept, runs in order of first appearance), so they get consecutive ids and
 * one run_log_spans row describes them (see the 001 migration).
 */
export class LogWriter {
  private buffer: LogLine[] = [];
  private jobs: string[] = [];
  private readonly runs = new Map<number, { seq: number; job: string }>();
  /** Last span per run as written; dropped whenever a write fails (a new span is then started). */
  private readonly spans = new Map<number, Span>();
  private readonly listeners = new Set<(lines: LogLine[]) => void>();
  private timer: NodeJS.Timeout | null = null;
  private deferred = false;
  /** Set while a failed write waits for its retry: appends then only buffer. */
  private failing = false;
  private readonly st: Record<"insert" | "runInfo" | "newSpan" | "growSpan" | "count" | "streamCount", Stmt>;
  private readonly writeBatch: (lines: LogLine[], jobs: string[]) => number;

  constructor(
    private readonly db: Db,
    private readonly opts: LogWriterOptions,
  ) {
    this.st = {
      insert: db.prepare("INSERT INTO run_logs (run_id, seq, ts, stream, line, job_name) VALUES (?, ?, ?, ?, ?, ?)"),
      runInfo: db.prepare(
        `SELECT job_name, (SELECT last_seq FROM run_log_spans WHERE run_id = job_runs.id ORDER BY first_seq DESC LIMIT 1) AS last_seq
         FROM job_runs WHERE id = ?`,
      ),
      newSpan: db.prepare("INSERT INTO run_log_spans (run_id, first_seq, last_seq, first_id) VALUES (?, ?, ?, ?)"),
      growSpan: db.prepare("UPDATE run_log_spans SET last_seq = ? WHERE run_id = ? AND first_seq = ?"),
      count: db.prepare("UPDATE store_meta SET value = value + ? WHERE key = 'log_lines'"),
      streamCount: db.prepare(
        "INSERT INTO run_log_counts (run_id, stream, lines) VALUES (?, ?, ?) ON CONFLICT (run_id, stream) DO UPDATE SET lines = lines + excluded.lines",
      ),
    };
    this.writeBatch = db.transaction((lines: LogLine[], jobs: string[]) => this.write(lines, jobs));
  }

  append(runId: number, stream: LogStream, line: string, ts: string): LogLine {
    const s = stream === "stdout" || stream === "stderr" || stream === "healthcheck" ? stream : normStream(stream);
    if (this.failing && this.buffer.length >= this.opts.flushLines * MAX_BUFFERED_BATCHES) {
      throw new Error(`log buffer full (${this.buffer.length} lines): writing to the database keeps failing`);
    }
    const run = this.runs.get(runId) ?? this.track(runId);
    const entry: LogLine = { run_id: runId, seq: ++run.seq, ts, stream: s, line };
    this.buffer.push(entry);
    this.jobs.push(run.job);
    if (this.buffer.length >= this.opts.flushLines && !this.failing) this.flushOrDefer();
    else if (this.timer === null) this.arm(this.opts.flushMs);
    return entry;
  }

  /**
   * A run was just inserted: it has no lines yet, so its first append starts at seq 1 without
   * reading the table. Rolled back, its id is not given to another run (runs.create); an id that
   * came again would be said again here, with its own job.
   */
  created(runId: number, job: string): void {
    this.runs.set(runId, { seq: 0, job });
    this.spans.delete(runId);
  }

  /**
   * Writes the buffer now. Inside a caller's transaction the write is
   * deferred to just after it (a microtask): lines must not commit or roll
   * back with someone else's transaction, nor be acknowledged before it.
   */
  flush(): void {
    if (this.buffer.length === 0) return;
    if (this.db.inTransaction) {
      this.defer();
      return;
    }
    const lines = this.buffer;
    const jobs = this.jobs;
    let lastId: number;
    try {
      lastId = this.writeBatch(lines, jobs);
    } catch (e) {
      this.spans.clear(); // the rolled-back transaction may have moved them
      throw e; // the buffer is intact
    }
    this.buffer = [];
    this.jobs = [];
    this.written(lines, lastId);
  }

  /**
   * LogsStore.flushWithin: the buffer written in the caller's open transaction. The lines leave
   * the buffer now (lines appended meanwhile, by the caller's own writes, start a new one) and
   * come back in front of it if the transaction rolls back.
   */
  flushWithin(): LinesWritten | null {
    if (this.buffer.length === 0) return null;
    if (!this.db.inTransaction) throw new Error("flushWithin needs the caller's open transaction");
    const lines = this.buffer;
    const jobs = this.jobs;
    let lastId: number;
    try {
      lastId = this.write(lines, jobs);
    } catch (e) {
      this.spans.clear();
      throw e; // the buffer is intact; the caller's transaction rolls back
    }
    this.buffer = [];
    this.jobs = [];
    return {
      committed: () => this.written(lines, lastId),
      rolledBack: () => {
        this.spans.clear();
        this.buffer = lines.concat(this.buffer);
        this.jobs = jobs.concat(this.jobs);
      },
    };
  }

  /** After a commit of `lines`: the timer, the runs tracked, the indexer and the listeners. */
  private written(lines: LogLine[], lastId: number): void {
    this.failing = false;
    if (this.timer !== null && this.buffer.length === 0) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    // Dropped only when every seq assigned is in the table (lines appended during a caller's
    // transaction may still wait in the buffer).
    if (this.runs.size > MAX_TRACKED_RUNS && this.buffer.length === 0) {
      this.runs.clear();
      this.spans.clear();
    }
    this.opts.onCommitted(lastId);
    for (const fn of this.listeners) {
      try {
        fn(lines);
      } catch (e) {
        this.opts.logger.error({ err: toError(e) }, "log flush listener failed");
      }
    }
  }

  onFlushed(listener: (lines: LogLine[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops the timer; the caller flushes first. */
  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Inside the flush transaction. Returns the highest id written. */
  private write(lines: LogLine[], jobs: string[]): number {
    // Group by run, keeping each run's order (runs in order of first appearance).
    const byRun = new Map<number, number[]>();
    for (let i = 0; i < lines.length; i++) {
      const runId = lines[i]!.run_id;
      const idx = byRun.get(runId);
      if (idx) idx.push(i);
      else byRun.set(runId, [i]);
    }
    const insert = this.st.insert;
    let lastId = 0;
    for (const [runId, idx] of byRun) {
      let span = this.spans.get(runId);
      let stdout = 0;
      let stderr = 0;
      // The span as stored (undefined: this batch starts it and it is inserted once, below).
      let stored = span ? span.lastSeq : undefined;
      for (const i of idx) {
        const l = lines[i]!;
        if (l.stream === "stdout") stdout++;
        else if (l.stream === "stderr") stderr++;
        const id = Number(insert.run(runId, l.seq, l.ts, l.stream, l.line, jobs[i]).lastInsertRowid);
        if (span && l.seq === span.lastSeq + 1 && id === span.firstId + (l.seq - span.firstSeq)) {
          span.lastSeq = l.seq; // contiguous: the span grows (written once per run below)
        } else {
          if (span) this.writeSpan(runId, span, stored);
          span = { firstSeq: l.seq, lastSeq: l.seq, firstId: id };
          stored = undefined;
        }
        lastId = id;
      }
      this.writeSpan(runId, span!, stored);
      this.spans.set(runId, span!);
      if (stdout) this.st.streamCount.run(runId, "stdout", stdout);
      if (stderr) this.st.streamCount.run(runId, "stderr", stderr);
      if (idx.length - stdout - stderr) this.st.streamCount.run(runId, "healthcheck", idx.length - stdout - stderr);
    }
    this.st.count.run(lines.length);
    return lastId;
  }

  /** A span's row: inserted when this batch started it (`stored` undefined), updated when it grew past `stored`. */
  private writeSpan(runId: number, span: Span, stored: number | undefined): void {
    if (stored === undefined) this.st.newSpan.run(runId, span.firstSeq, span.lastSeq, span.firstId);
    else if (stored !== span.lastSeq) this.st.growSpan.run(span.lastSeq, runId, span.firstSeq);
  }

  private track(runId: number): { seq: number; job: string } {
    const row = this.st.runInfo.get(runId) as { job_name: string; last_seq: number | null } | undefined;
    if (!row) throw new NotFoundError("run", runId);
    const run = { seq: row.last_seq ?? 0, job: row.job_name };
    this.runs.set(runId, run);
    return run;
  }

  private flushOrDefer(): void {
    try {
      this.flush();
    } catch (e) {
      // Keep the lines and try again shortly; the caller's line is buffered, not lost.
      this.opts.logger.error({ err: toError(e), pending: this.buffer.length }, "writing log lines failed; retrying");
      this.failing = true;
      this.arm(RETRY_MS);
    }
  }

  private arm(ms: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flushOrDefer();
    }, ms);
    this.timer.unref();
  }

  private defer(): void {
    if (this.deferred) return;
    this.deferred = true;
    queueMicrotask(() => {
      this.deferred = false;
      this.flushOrDefer();
    });
  }
}
