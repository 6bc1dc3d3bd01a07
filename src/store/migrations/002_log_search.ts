import type { Migration } from "./migrate.js";

/**
 * Full-text search over run_logs.line. The FTS table is contentless (the
 * text lives once, in run_logs) and keyed by run_logs.id; contentless_delete
 * lets retention remove the entries of deleted lines. It is filled off the
 * write path by the background indexer (ftsIndexer.ts), which records the
 * highest indexed run_logs.id in store_meta so that it resumes after a
 * restart. Lines that exist when this migration runs are indexed by it.
 */
export const logSearch: Migration = {
  version: 2,
  name: "log_search",
  up(db) {
    db.exec(`
CREATE VIRTUAL TABLE run_logs_fts USING fts5 (line, content = '', contentless_delete = 1);
-- No automatic merging: FTS5's automerge and crisis merges do unbounded
-- work inside whichever insert triggers them (measured: single 1,000-row
-- transactions of 100-350 ms CPU at a million rows). The indexer instead
-- merges a bounded number of pages after each slice ('merge', N), 8
-- segments at a time; crisismerge is raised so it stays a last resort.
INSERT INTO run_logs_fts (run_logs_fts, rank) VALUES ('automerge', 0);
INSERT INTO run_logs_fts (run_logs_fts, rank) VALUES ('usermerge', 8);
INSERT INTO run_logs_fts (run_logs_fts, rank) VALUES ('crisismerge', 64);
INSERT INTO store_meta (key, value) VALUES ('fts_indexed_id', '0');
`);
  },
};
