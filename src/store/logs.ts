import type { LinesWritten, LogsStore } from "./api.js";
import type { FtsIndexer } from "./ftsIndexer.js";
import { toFtsQuery } from "./ftsQuery.js";
import type { LogWriter } from "./logWriter.js";
import type { Db, Stmt } from "./sql.js";
import { checkSlice, count, normStream, StatementCache, Where } from "./sql.js";
import type { LogLine, LogStream, Slice } from "./types.js";

const DEFAULT_TAIL_STREAMS: readonly LogStream[] = ["stdout", "stderr"];
const COLS = "l.run_id, l.seq, l.ts, l.stream, l.line";

/** A run's lines through its spans: rowid range scans, in seq order when ordered by (first_seq, id). */
const SPAN_JOIN = `run_log_spans s JOIN run_logs l
  ON l.id BETWEEN s.first_id + max(0, ? - s.first_seq) AND s.first_id + (min(s.last_seq, ?) - s.first_seq)`;
const NO_LIMIT = Number.MAX_SAFE_INTEGER;
const COLS_ID = `l.id, l.job_name, ${COLS}`;

type SearchRow = LogLine & { id: number; job_name: string };

/** run_logs: appends go through the LogWriter, reads see durable lines only. */
export class SqliteLogs implements LogsStore {
  private readonly cache: StatementCache;
  private readonly st: Record<"range" | "lastSeq" | "allLines", Stmt>;

  constructor(
    db: Db,
    private readonly writer: LogWriter,
    private readonly indexer: FtsIndexer,
  ) {
    this.cache = new StatementCache(db);
    this.st = {
      // seq lo..hi of one run: pure rowid ranges, no stepping over skipped lines
      range: db.prepare(
        `SELECT ${COLS} FROM ${SPAN_JOIN} WHERE s.run_id = ? AND s.last_seq >= ? AND s.first_seq <= ? ORDER BY s.first_seq, l.id`,
      ),
      lastSeq: db.prepare("SELECT last_seq FROM run_log_spans WHERE run_id = ? ORDER BY first_seq DESC LIMIT 1").pluck(),
      allLines: db.prepare("SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'log_lines'").pluck(),
    };
  }

  append(runId: number, stream: LogStream, line: string, ts: string): LogLine {
    return this.writer.append(runId, stream, line, ts);
  }

  flush(): void {
    this.writer.flush();
  }

  flushWithin(): LinesWritten | null {
    return this.writer.flushWithin();
  }

  onFlushed(listener: (lines: LogLine[]) => void): () => void {
    return this.writer.onFlushed(listener);
  }

  ftsLag(): number {
    return this.indexer.lag();
  }

  forRun(
    runId: number,
    opts: { afterSeq?: number; limit: number; offset: number; streams?: LogStream[] },
  ): { lines: LogLine[]; total: number } {
    checkSlice(opts.limit, opts.offset);
    const after = Math.max(0, opts.afterSeq ?? 0);
    const streams = streamSet(opts.streams);
    if (streams === null) {
      // seq runs 1..last without gaps: the page is the seq range after+offset+1 .. +limit.
      const last = (this.st.lastSeq.get(runId) as number | undefined) ?? 0;
      const total = Math.max(0, last - after);
      const lo = after + opts.offset + 1;
      const hi = Math.min(last, lo + opts.limit - 1);
      const lines = lo > hi ? [] : (this.st.range.all(lo, hi, runId, lo, hi) as LogLine[]);
      return { lines, total };
    }
    if (streams.length === 0) return { lines: [], total: 0 };
    const inStreams = `l.stream IN (${streams.map(() => "?").join(", ")})`;
    const where = `WHERE s.run_id = ? AND s.last_seq > ? AND ${inStreams}`;
    const params = [after + 1, NO_LIMIT, runId, after, ...streams];
    // From the start of the run the per-stream counts give the total; after a seq, count the rest.
    const total =
      after === 0
        ? count(this.cache.get(`SELECT coalesce(sum(lines), 0) FROM run_log_counts WHERE run_id = ? AND stream IN (${streams.map(() => "?").join(", ")})`), [runId, ...streams])
        : count(this.cache.get(`SELECT count(*) FROM ${SPAN_JOIN} ${where}`), params);
    const lines =
      opts.offset >= total
        ? []
        : (this.cache
            .get(`SELECT ${COLS} FROM ${SPAN_JOIN} ${where} ORDER BY s.first_seq, l.id LIMIT ? OFFSET ?`)
            .all(...params, opts.limit, opts.offset) as LogLine[]);
    return { lines, total };
  }

  search(
    q: { run_id?: number; job?: string; stream?: LogStream; q?: string },
    limit: number,
    offset: number,
  ): Slice<SearchRow> {
    checkSlice(limit, offset);
    const stream = q.stream === undefined ? undefined : normStream(q.stream);
    if (q.q !== undefined && q.q.trim() !== "") {
      // The full-text match picks the candidates; the other filters check each one.
      const match = toFtsQuery(q.q);
      if (match === null) return { rows: [], total: 0, limit, offset };
      const w = new Where().add("l.id IN (SELECT rowid FROM run_logs_fts WHERE run_logs_fts MATCH ?)", match);
      if (q.run_id !== undefined) w.add("l.run_id = ?", q.run_id);
      if (q.job !== undefined) w.add("l.job_name = ?", q.job);
      if (stream !== undefined) w.add("l.stream = ?", stream);
      const total = count(this.cache.get(`SELECT count(*) FROM run_logs l${w.sql()}`), w.params);
      const rows =
        offset >= total
          ? []
          : (this.cache.get(`SELECT ${COLS_ID} FROM run_logs l${w.sql()} ORDER BY l.id DESC LIMIT ? OFFSET ?`).all(...w.params, limit, offset) as SearchRow[]);
      return { rows, total, limit, offset };
    }
    // Without text, totals come from the per-run, per-stream counts.
    const runs = (): Where => {
      const w = new Where();
      if (q.run_id !== undefined) w.add("run_id = ?", q.run_id);
      if (q.job !== undefined) w.add("run_id IN (SELECT id FROM job_runs WHERE job_name = ?)", q.job);
      return w;
    };
    const counts = runs();
    if (stream !== undefined) counts.add("stream = ?", stream);
    const total =
      counts.terms.length === 0
        ? (this.st.allLines.get() as number)
        : count(this.cache.get(`SELECT coalesce(sum(lines), 0) FROM run_log_counts${counts.sql()}`), counts.params);
    if (offset >= total) return { rows: [], total, limit, offset };
    const rows =
      q.run_id !== undefined || q.job !== undefined
        ? this.newestThroughSpans(runs(), stream, limit, offset)
        : (this.cache
            .get(`SELECT ${COLS_ID} FROM run_logs l${stream === undefined ? "" : " WHERE l.stream = ?"} ORDER BY l.id DESC LIMIT ? OFFSET ?`)
            .all(...(stream === undefined ? [] : [stream]), limit, offset) as SearchRow[]);
    return { rows, total, limit, offset };
  }

  /**
   * Newest lines first of the runs selected by `runs` (terms on run_id),
   * walking their spans from the newest: spans are disjoint id ranges, so
   * spans by first_id desc, lines by id desc within each, is id order. Reads
   * only the lines up to offset + limit, never sorts the runs' lines.
   */
  private newestThroughSpans(runs: Where, stream: LogStream | undefined, limit: number, offset: number): SearchRow[] {
    const spans = this.cache
      .get(`SELECT first_id, first_id + (last_seq - first_seq) AS last_id FROM run_log_spans${runs.sql()} ORDER BY first_id DESC`)
      .raw()
      .all(...runs.params) as [number, number][];
    const out: SearchRow[] = [];
    let skip = offset;
    const page = this.cache.get(`SELECT ${COLS_ID} FROM run_logs l WHERE l.id BETWEEN ? AND ? ORDER BY l.id DESC`);
    const pageOf = this.cache.get(`SELECT ${COLS_ID} FROM run_logs l WHERE l.id BETWEEN ? AND ? AND l.stream = ? ORDER BY l.id DESC LIMIT ? OFFSET ?`);
    const countOf = this.cache.get("SELECT count(*) FROM run_logs l WHERE l.id BETWEEN ? AND ? AND l.stream = ?").pluck();
    for (const [first, last] of spans) {
      const need = limit - out.length;
      if (need <= 0) break;
      if (stream === undefined) {
        const size = last - first + 1;
        if (skip >= size) {
          skip -= size;
          continue;
        }
        const top = last - skip;
        skip = 0;
        out.push(...(page.all(Math.max(first, top - need + 1), top) as SearchRow[]));
      } else {
        if (skip > 0) {
          const inSpan = countOf.get(first, last, stream) as number;
          if (skip >= inSpan) {
            skip -= inSpan;
            continue;
          }
        }
        out.push(...(pageOf.all(first, last, stream, need, skip) as SearchRow[]));
        skip = 0;
      }
    }
    return out;
  }

  tail(runId: number, n: number, streams: LogStream[] = [...DEFAULT_TAIL_STREAMS]): LogLine[] {
    return this.tailWithin(runId, n, Number.POSITIVE_INFINITY, streams);
  }

  tailWithin(runId: number, n: number, maxChars: number, streams: LogStream[] = [...DEFAULT_TAIL_STREAMS]): LogLine[] {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`n must be an integer >= 0, got ${String(n)}`);
    const set = streamSet(streams);
    if (n === 0 || set?.length === 0) return [];
    const inStreams = set === null ? "" : ` AND l.stream IN (${set.map(() => "?").join(", ")})`;
    const st = this.cache.get(`SELECT ${COLS} FROM ${SPAN_JOIN} WHERE s.run_id = ?${inStreams} ORDER BY s.first_seq DESC, l.id DESC LIMIT ?`);
    if (maxChars === Number.POSITIVE_INFINITY) return (st.all(0, NO_LIMIT, runId, ...(set ?? []), n) as LogLine[]).reverse();
    const out: LogLine[] = [];
    let used = 0;
    for (const line of st.iterate(0, NO_LIMIT, runId, ...(set ?? []), n) as IterableIterator<LogLine>) {
      used += line.line.length;
      if (used > maxChars) break; // the iterator is closed: SQLite reads no further
      out.push(line);
    }
    return out.reverse();
  }
}

/** The distinct streams asked for, or null when that is all three (no filter needed). */
function streamSet(streams: readonly LogStream[] | undefined): LogStream[] | null {
  if (streams === undefined) return null;
  const s = [...new Set(streams.map(normStream))];
  return s.length === 3 ? null : s;
}
