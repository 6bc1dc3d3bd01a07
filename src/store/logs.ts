import type { LogsStore } from "./api.js";
import type { FtsIndexer } from "./ftsIndexer.js";
import { toFtsQuery } from "./ftsQuery.js";
import type { LogWriter } from "./logWriter.js";
import type { Db } from "./sql.js";
import { checkSlice, count, normStream, StatementCache, Where } from "./sql.js";
import type { LogLine, LogStream, Slice } from "./types.js";

const DEFAULT_TAIL_STREAMS: readonly LogStream[] = ["stdout", "stderr"];
const LINE_COLS = "run_id, seq, ts, stream, line";

type SearchRow = LogLine & { id: number; job_name: string };

/** run_logs: appends go through the LogWriter, reads see durable lines only. */
export class SqliteLogs implements LogsStore {
  private readonly cache: StatementCache;

  constructor(
    db: Db,
    private readonly writer: LogWriter,
    private readonly indexer: FtsIndexer,
  ) {
    this.cache = new StatementCache(db);
  }

  append(runId: number, stream: LogStream, line: string, ts: string): LogLine {
    return this.writer.append(runId, stream, line, ts);
  }

  flush(): void {
    this.writer.flush();
  }

  onFlushed(listener: (lines: LogLine[]) => void): () => void {
    return this.writer.onFlushed(listener);
  }

  /** Lines written but not yet searchable with `q` (the full-text index trails during bursts). */
  ftsLag(): number {
    return this.indexer.lag();
  }

  forRun(
    runId: number,
    opts: { afterSeq?: number; limit: number; offset: number; streams?: LogStream[] },
  ): { lines: LogLine[]; total: number } {
    checkSlice(opts.limit, opts.offset);
    const w = new Where().add("run_id = ?", runId);
    if (opts.afterSeq !== undefined) w.add("seq > ?", opts.afterSeq);
    addStreams(w, opts.streams);
    const where = w.sql();
    const total = count(this.cache.get(`SELECT count(*) FROM run_logs${where}`), w.params);
    const lines =
      opts.offset >= total
        ? []
        : (this.cache
            .get(`SELECT ${LINE_COLS} FROM run_logs${where} ORDER BY seq LIMIT ? OFFSET ?`)
            .all(...w.params, opts.limit, opts.offset) as LogLine[]);
    return { lines, total };
  }

  search(
    q: { run_id?: number; job?: string; stream?: LogStream; q?: string },
    limit: number,
    offset: number,
  ): Slice<SearchRow> {
    checkSlice(limit, offset);
    const w = new Where();
    if (q.run_id !== undefined) w.add("run_id = ?", q.run_id);
    // Through job_runs so the (run_id, seq) index serves it; run_logs has no job index on the hot path.
    if (q.job !== undefined) w.add("run_id IN (SELECT id FROM job_runs WHERE job_name = ?)", q.job);
    if (q.stream !== undefined) w.add("stream = ?", normStream(q.stream));
    if (q.q !== undefined && q.q.trim() !== "") {
      const match = toFtsQuery(q.q);
      if (match === null) return { rows: [], total: 0, limit, offset };
      w.add("id IN (SELECT rowid FROM run_logs_fts WHERE run_logs_fts MATCH ?)", match);
    }
    const where = w.sql();
    const total = count(this.cache.get(`SELECT count(*) FROM run_logs${where}`), w.params);
    const rows =
      offset >= total
        ? []
        : (this.cache
            .get(`SELECT id, job_name, ${LINE_COLS} FROM run_logs${where} ORDER BY id DESC LIMIT ? OFFSET ?`)
            .all(...w.params, limit, offset) as SearchRow[]);
    return { rows, total, limit, offset };
  }

  tail(runId: number, n: number, streams: LogStream[] = [...DEFAULT_TAIL_STREAMS]): LogLine[] {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`n must be an integer >= 0, got ${String(n)}`);
    if (n === 0) return [];
    const w = new Where().add("run_id = ?", runId);
    addStreams(w, streams);
    const st = this.cache.get(`SELECT ${LINE_COLS} FROM run_logs${w.sql()} ORDER BY seq DESC LIMIT ?`);
    return (st.all(...w.params, n) as LogLine[]).reverse();
  }
}

function addStreams(w: Where, streams: readonly LogStream[] | undefined): void {
  if (streams === undefined) return;
  const s = [...new Set(streams.map(normStream))];
  if (s.length === 0) w.add("0");
  else if (s.length < 3) w.add(`stream IN (${s.map(() => "?").join(", ")})`, ...s);
}
