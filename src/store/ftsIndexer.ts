import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";
import type { Db, Stmt } from "./sql.js";

export interface FtsIndexerOptions {
  /** Wait after new lines are written before indexing them, so a burst is indexed in large slices. */
  intervalMs: number;
  /** Target event-loop time of one slice; the slice size adapts to it. */
  sliceBudgetMs: number;
  logger: Logger;
}

// Small slices make many small FTS segments and cost more per row.
const MIN_SLICE = 1_000;
const MAX_SLICE = 10_000;
/**
 * Pages of segment merging per indexed row. Each row is merged once per
 * index level (about log8 of the row count), so the merge work must exceed
 * what the slice wrote several times over to keep the segment count flat.
 */
const MERGE_PAGES_PER_ROW = 0.15;
const MIN_MERGE_PAGES = 64;
/** A merge-only pass after a burst, while FTS5 still has levels to merge. */
const IDLE_MERGE_PAGES = 300;
const RETRY_MS = 1_000;

/**
 * Feeds run_logs.line into run_logs_fts off the write path. FTS5 costs far
 * more per row than the plain insert, so the log writer never touches the
 * index: after lines commit, this indexer wakes up (`intervalMs` later) and
 * indexes everything past its watermark in slices of bounded duration, one
 * transaction each, yielding to the event loop between slices.
 *
 * Invariant: every run_logs row with id <= watermark is in the index (or was
 * deleted together with its index entry). The watermark is stored in
 * store_meta in the same transaction as the entries, so it resumes exactly
 * after a restart or crash.
 */
export class FtsIndexer {
  private watermark: number;
  /** Highest run_logs.id known to be committed. */
  private lastLogId: number;
  private sliceRows = 2_000;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private stopped = false;
  /** Lines were committed since the current slice started: a burst is on. */
  private writing = false;
  private readonly st: Record<"maxId" | "select" | "insert" | "remove" | "mark" | "merge" | "changes", Stmt>;
  /** FTS5 may still have segments to merge (set by indexing, cleared when a merge step does nothing). */
  private mergePending = true;
  private readonly slice: () => { rows: number; mark: number };

  constructor(
    private readonly db: Db,
    private readonly opts: FtsIndexerOptions,
  ) {
    this.watermark = Number(
      db.prepare("SELECT value FROM store_meta WHERE key = 'fts_indexed_id'").pluck().get() ?? 0,
    );
    this.st = {
      maxId: db.prepare("SELECT max(id) FROM run_logs").pluck(),
      select: db.prepare("SELECT id, line FROM run_logs WHERE id > ? ORDER BY id LIMIT ?").raw(),
      insert: db.prepare("INSERT INTO run_logs_fts (rowid, line) VALUES (?, ?)"),
      remove: db.prepare("DELETE FROM run_logs_fts WHERE rowid = ?"),
      mark: db.prepare("UPDATE store_meta SET value = ? WHERE key = 'fts_indexed_id'"),
      merge: db.prepare("INSERT INTO run_logs_fts (run_logs_fts, rank) VALUES ('merge', ?)"),
      changes: db.prepare("SELECT total_changes()").pluck(),
    };
    this.lastLogId = this.maxId();
    // Ids above the highest line are of deleted lines, whose entries went with them (forget): a watermark
    // there (its lowering lost, from an earlier version) would leave the lines that reuse those ids unindexed.
    if (this.watermark > this.lastLogId) {
      this.watermark = this.lastLogId;
      this.st.mark.run(String(this.watermark));
    }
    this.slice = db.transaction(() => this.indexSlice());
    this.schedule(opts.intervalMs); // index what is behind, or finish merging
  }

  /** Rows written but not yet searchable. */
  lag(): number {
    return Math.max(0, this.lastLogId - this.watermark);
  }

  /** Called by the log writer after a commit. */
  noteWritten(lastId: number): void {
    if (lastId > this.lastLogId) this.lastLogId = lastId;
    this.writing = true;
    this.schedule(this.opts.intervalMs);
  }

  /**
   * Removes the index entries of the run_logs ids firstId..lastId about to
   * be deleted (inside the caller's transaction). Rows past the watermark
   * were never indexed.
   */
  forget(firstId: number, lastId: number): void {
    const end = Math.min(lastId, this.watermark);
    for (let id = firstId; id <= end; id++) this.st.remove.run(id);
  }

  /**
   * In the transaction that deleted run_logs rows, after the deletes. run_logs
   * ids are not AUTOINCREMENT, so when the newest lines are gone the next ids
   * reuse numbers at or below the watermark; lowering the stored watermark to
   * the highest remaining id, in the same commit, keeps the invariant and
   * gets those new lines indexed. Returns that id, for afterDelete.
   */
  lowerWithin(): number {
    const max = this.maxId();
    if (max < this.watermark) this.st.mark.run(String(max));
    return max;
  }

  /** Once that transaction is committed: the same in memory. */
  afterDelete(max: number): void {
    if (max < this.lastLogId) this.lastLogId = max;
    if (max < this.watermark) this.watermark = max;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
  }

  private maxId(): number {
    return Number(this.st.maxId.get() ?? 0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.timer || this.immediate) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pass();
    }, delayMs);
    this.timer.unref();
  }

  /**
   * One slice, then yield; continue while behind. While lines keep arriving
   * the indexer takes at most half of the event loop (it waits as long as
   * its slice took), so ingestion keeps priority during a burst; once the
   * burst ends it runs slice after slice to catch up.
   */
  private pass(): void {
    if (this.stopped) return;
    this.writing = false;
    let took: number;
    try {
      const started = performance.now();
      const { rows, mark } = this.slice();
      this.watermark = mark; // only after the commit succeeded
      took = performance.now() - started;
      this.adapt(rows, took);
    } catch (e) {
      this.opts.logger.error({ err: toError(e), watermark: this.watermark }, "log search indexing failed; retrying");
      this.schedule(RETRY_MS);
      return;
    }
    if (this.stopped) return;
    if (this.lag() === 0) {
      if (this.mergePending) this.schedule(this.opts.intervalMs); // compact the index while idle
      return;
    }
    if (this.writing) {
      this.schedule(Math.max(1, Math.round(took)));
      return;
    }
    this.immediate = setImmediate(() => {
      this.immediate = null;
      this.pass();
    });
    this.immediate.unref();
  }

  private indexSlice(): { rows: number; mark: number } {
    const rows = this.st.select.all(this.watermark, this.sliceRows) as [number, string][];
    for (const [id, line] of rows) this.st.insert.run(id, line);
    this.mergeStep(rows.length === 0 ? IDLE_MERGE_PAGES : Math.max(MIN_MERGE_PAGES, Math.round(rows.length * MERGE_PAGES_PER_ROW)));
    let mark = rows.length ? rows[rows.length - 1]![0] : this.watermark;
    // A short slice read every committed row: ids up to lastLogId that it did
    // not see were deleted before they were indexed.
    if (rows.length < this.sliceRows) mark = Math.max(mark, this.lastLogId);
    if (mark !== this.watermark) this.st.mark.run(String(mark));
    return { rows: rows.length, mark };
  }

  /** Up to `pages` pages of merging; remembers whether FTS5 had any left to do. */
  private mergeStep(pages: number): void {
    const before = this.st.changes.get() as number;
    this.st.merge.run(pages);
    const after = this.st.changes.get() as number;
    // FTS5 documents a difference of 2 or more as "work was done".
    this.mergePending = after - before >= 2;
  }

  private adapt(rows: number, ms: number): void {
    if (rows < this.sliceRows) return; // only full slices say how fast we are
    const next = Math.round((this.sliceRows * this.opts.sliceBudgetMs) / Math.max(ms, 0.5));
    // at most double per slice: one quick slice says little about the next merge
    this.sliceRows = Math.min(MAX_SLICE, Math.max(MIN_SLICE, Math.min(next, this.sliceRows * 2)));
  }
}
