import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { Worker } from "node:worker_threads";
import type { Logger } from "../shared/logger.js";
import type { Db } from "./sql.js";
import { keepHeapFlags } from "../shared/heapFlags.js";
import { toError } from "../shared/toError.js";

/**
 * WAL checkpoints off the event loop (issue 24; docs/perf/FIXES.md, "WAL
 * checkpoints on a worker thread").
 *
 * SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL
 * past `wal_autocheckpoint` pages: it copies the pages into the database
 * file and syncs the WAL and the file, on whichever thread committed. For
 * svcd that is the event loop, and the two fsyncs were ~10 % of a busy
 * daemon's time. Here svcd's connection never checkpoints by itself;
 * instead:
 *
 * - A timer reads how many WAL pages wait to be copied (the WAL index's
 *   `mxFrame - nBackfill`, from the `-shm` file, a documented format:
 *   https://www.sqlite.org/walformat.html), every 25 ms while the WAL grows,
 *   backing off to every 200 ms while it does not.
 * - Once they reach `wal_autocheckpoint` pages, a worker thread with its
 *   own connection to the same file runs `PRAGMA wal_checkpoint(PASSIVE)`:
 *   the same copy and syncs SQLite would have made, while svcd's connection
 *   goes on committing (a passive checkpoint never blocks a writer, and the
 *   writer restarts the WAL from its start once everything is copied).
 * - A passive checkpoint copies the pages that were in the WAL when it
 *   began; under steady commits some always arrive meanwhile, and SQLite
 *   starts the WAL file over only when a write finds every page copied. So
 *   once the WAL holds `RESTART_FACTOR` times the page limit, svcd's own
 *   connection copies what is left (a few pages: the thread copied the rest)
 *   between two of its transactions, and its next write starts the WAL over.
 *   That keeps the WAL within about 4 times the limit (16 MB by default),
 *   with a quarter of the syncs on the event loop.
 * - A reader that keeps its snapshot (another process's, a backup's) holds
 *   the WAL from starting over, and it grows; SQLite would keep the file at
 *   that length for good. `journal_size_limit` (set by start()) has the first
 *   commit after the WAL starts over truncate the file to one page limit more
 *   than the length above: in steady work there is nothing to truncate.
 * - The worker starts at the first checkpoint and stops after a minute
 *   without one, so an idle daemon does not carry its ~10 MB.
 *
 * Durability is SQLite's own: commits are written to the WAL as before, and
 * the checkpoint is SQLite's, syncs included. If the worker cannot start or
 * fails, or the WAL index cannot be read, svcd's connection goes back to
 * checkpointing by itself (a warning says so). `wal_autocheckpoint: 0`
 * still means no automatic checkpoints.
 *
 * The `-shm` file is read through a descriptor of its own, kept open until
 * svcd's connection is closed: SQLite's WAL locks are POSIX locks on that
 * file, and closing any descriptor of a file drops every lock the process
 * holds on it (https://www.sqlite.org/howtocorrupt.html, 2.2). So close()
 * leaves it open and release() closes it, after the database is closed.
 */
export interface CheckpointerOptions {
  /** Pages waiting in the WAL that start a checkpoint (storage.sqlite.wal_autocheckpoint); 0: never. */
  pages: number;
  logger: Logger;
  /** Stop the worker after this long without a checkpoint. */
  idleStopMs?: number;
}

export interface CheckpointStats {
  /** Checkpoints run by the worker. */
  checkpoints: number;
  /** Checkpoints svcd's connection ran to start the WAL over (see RESTART_FACTOR). */
  restarts: number;
  /** Whether the worker is running now. */
  running: boolean;
  /** Whether svcd's own connection checkpoints again, as SQLite does by default (the thread failed). */
  inline: boolean;
}

const FAST_POLL_MS = 25;
/** Polls in a row that could not read the WAL index before svcd's connection checkpoints by itself again. */
const UNREADABLE_POLLS = 3;
/** The WAL, in page limits, at which svcd's connection copies what the thread left so the WAL starts over. */
const RESTART_FACTOR = 4;
/** Bytes before each page in the WAL (https://www.sqlite.org/walformat.html). */
const WAL_FRAME_HEADER = 24;
const SLOW_POLL_MS = 200;
/** How long close() waits for the thread to close its connection (a checkpoint under way finishes first). */
const CLOSE_WAIT_MS = 10_000;

export class Checkpointer {
  private readonly file: string;
  private readonly shmPath: string;
  private readonly pages: number;
  private readonly logger: Logger;
  private readonly idleStopMs: number;
  private readonly header = Buffer.alloc(136);
  private readonly little = os.endianness() === "LE";
  private shm: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private delay = FAST_POLL_MS;
  private seenFrames = -1;
  /** The WAL's length when svcd's connection last copied what the thread left (see poll). */
  private restartedAt = -1;
  private unreadable = 0;
  /** The thread, and the flag it sets to 1 once its connection is closed (the synchronous handshake of close()). */
  private thread: { worker: Worker; closed: Int32Array } | null = null;
  private inFlight = false;
  private lastCheckpointAt = 0;
  private checkpoints = 0;
  private restarts = 0;
  private inline = false;
  private stopped = false;

  constructor(
    private readonly db: Db,
    file: string,
    opts: CheckpointerOptions,
  ) {
    this.file = file;
    // SQLite follows a symbolic link to the database and keeps -wal and -shm beside the file itself.
    this.shmPath = `${realOrSame(file)}-shm`;
    this.pages = Math.max(0, Math.trunc(opts.pages));
    this.logger = opts.logger;
    this.idleStopMs = opts.idleStopMs ?? 60_000;
  }

  /** Takes checkpoints over from svcd's connection. Without a page limit there are none to take. */
  start(): void {
    if (this.pages === 0 || this.stopped) return;
    this.db.pragma("wal_autocheckpoint = 0");
    // The WAL file shrinks back after a reader held it from starting over (see the header).
    const pageSize = this.db.pragma("page_size", { simple: true }) as number;
    this.db.pragma(`journal_size_limit = ${(RESTART_FACTOR + 1) * this.pages * (pageSize + WAL_FRAME_HEADER)}`);
    this.schedule();
  }

  stats(): CheckpointStats {
    return { checkpoints: this.checkpoints, restarts: this.restarts, running: this.thread !== null, inline: this.inline };
  }

  /**
   * The WAL's pages (`frames`, since it last started over) and those of them not yet copied into the
   * database file (`pending`); null when the WAL index cannot be read.
   */
  walPages(): { frames: number; pending: number } | null {
    try {
      this.shm ??= fs.openSync(this.shmPath, "r");
      if (fs.readSync(this.shm, this.header, 0, 136, 0) < 136) return null;
    } catch {
      return null;
    }
    const u32 = (at: number) => (this.little ? this.header.readUInt32LE(at) : this.header.readUInt32BE(at));
    if (this.header[12] === 0) return null; // isInit: no WAL index yet
    const frames = u32(16); // mxFrame
    const copied = u32(96); // nBackfill
    return { frames, pending: frames > copied ? frames - copied : 0 };
  }

  /**
   * Stops the timer and closes the worker's connection before returning (so that svcd's own close is
   * the last one and removes the WAL as before). The -shm descriptor stays open: release() it once
   * svcd's connection is closed.
   */
  close(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.stopWorker(true);
  }

  /** Closes the -shm descriptor: only after svcd's connection is closed (see the top of this file). */
  release(): void {
    if (this.shm !== null) fs.closeSync(this.shm);
    this.shm = null;
  }

  private schedule(): void {
    if (this.stopped || this.inline) return;
    this.timer = setTimeout(() => this.poll(), this.delay);
    this.timer.unref();
  }

  private poll(): void {
    this.timer = null;
    const wal = this.walPages();
    if (wal === null && ++this.unreadable >= UNREADABLE_POLLS) {
      this.fallBack(new Error(`cannot read the WAL index ${this.shmPath}`), true);
      return;
    }
    if (wal !== null) this.unreadable = 0;
    // Fast while the WAL grows, slower while it does not.
    this.delay = wal !== null && wal.frames !== this.seenFrames ? FAST_POLL_MS : Math.min(SLOW_POLL_MS, this.delay * 2);
    this.seenFrames = wal?.frames ?? -1;
    if (!this.inFlight) {
      if (wal !== null && this.restartDue(wal)) this.restart(wal.frames);
      else if (wal !== null && wal.pending >= this.pages) this.request();
      else if (this.thread && Date.now() - this.lastCheckpointAt > this.idleStopMs) this.stopWorker(true);
    }
    this.schedule();
  }

  /**
   * The thread copies the bulk; once the WAL is long, svcd's connection copies what the thread left, to
   * start it over. Should the WAL not start over (another process's reader holds it), again only after as
   * many more pages.
   */
  private restartDue(wal: { frames: number; pending: number }): boolean {
    const long = RESTART_FACTOR * this.pages;
    const copied = wal.frames - wal.pending;
    if (wal.pending === 0 || copied === 0 || wal.frames < long) return false;
    return this.restartedAt < 0 || wal.frames < this.restartedAt || wal.frames >= this.restartedAt + long;
  }

  /** Copies what the thread left, on svcd's connection: nothing is committed meanwhile, so the next write starts the WAL over. */
  private restart(frames: number): void {
    this.restartedAt = frames;
    try {
      this.db.pragma("wal_checkpoint(PASSIVE)");
      this.restarts++;
    } catch (e) {
      // The connection is busy (a statement still iterating) or closing: the next long WAL tries again.
      this.logger.debug({ err: toError(e) }, "svcd's connection could not copy the rest of the WAL");
    }
  }

  private request(): void {
    const w = this.thread?.worker ?? this.startWorker();
    if (!w) return;
    this.inFlight = true;
    this.lastCheckpointAt = Date.now();
    w.postMessage("checkpoint");
  }

  private startWorker(): Worker | null {
    try {
      const sqlite = createRequire(import.meta.url).resolve("better-sqlite3");
      const closed = new Int32Array(new SharedArrayBuffer(4));
      const w = keepHeapFlags(
        new Worker(WORKER_SOURCE, {
          eval: true,
          workerData: { sqlite, file: this.file, closed },
          resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 1, stackSizeMb: 1 },
        }),
      );
      w.unref();
      w.on("message", (m: { ok: boolean; error?: string }) => {
        this.inFlight = false;
        if (m.ok) this.checkpoints++;
        else this.fallBack(new Error(m.error ?? "unknown error"), true);
      });
      // A thread that failed or stopped will not answer a close: it is not waited for.
      w.on("error", (e) => this.fallBack(e, false));
      w.on("exit", (code) => {
        if (this.thread?.worker === w && !this.stopped) this.fallBack(new Error(`the checkpoint thread stopped (exit code ${code})`), false);
      });
      this.thread = { worker: w, closed };
      return w;
    } catch (e) {
      this.fallBack(e, false);
      return null;
    }
  }

  /** svcd's connection checkpoints by itself again, as SQLite does by default. `answers`: the thread can still close its connection. */
  private fallBack(e: unknown, answers: boolean): void {
    if (this.inline || this.stopped) return;
    this.inline = true;
    this.inFlight = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    try {
      this.db.pragma(`wal_autocheckpoint = ${this.pages}`);
    } catch {
      // the connection is closed: nothing left to checkpoint
    }
    this.stopWorker(answers);
    this.logger.warn({ err: toError(e) }, "WAL checkpoints are back on svcd's own connection: the checkpoint thread failed");
  }

  private stopWorker(wait: boolean): void {
    const thread = this.thread;
    this.thread = null;
    this.inFlight = false;
    if (!thread) return;
    const { worker: w, closed: flag } = thread;
    w.removeAllListeners();
    w.on("error", () => {}); // it is going: a late error changes nothing
    if (wait) {
      w.postMessage("close");
      // Wait (bounded) for the worker to close its connection: the last connection to close removes the WAL.
      Atomics.wait(flag, 0, 0, CLOSE_WAIT_MS);
    }
    void w.terminate();
  }
}

/**
 * The worker thread: its own connection, a passive checkpoint per message. It is source text (a worker
 * started from the one-file daemon bundle cannot import a module by path), as in backup.ts.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.sqlite);
const flag = workerData.closed;
let db = null;
let ckpt = null;
parentPort.on("message", (m) => {
  if (m === "close") {
    try { if (db) db.close(); } finally { Atomics.store(flag, 0, 1); Atomics.notify(flag, 0); parentPort.close(); }
    return;
  }
  try {
    if (!db) {
      db = new Database(workerData.file, { fileMustExist: true });
      db.pragma("wal_autocheckpoint = 0");
      ckpt = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
    }
    ckpt.get();
    parentPort.postMessage({ ok: true });
  } catch (e) {
    parentPort.postMessage({ ok: false, error: e && e.message ? e.message : String(e) });
  }
});
`;

/** The path with every symbolic link resolved; as given when it does not exist. */
export function realOrSame(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}
