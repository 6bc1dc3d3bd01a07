import type { FastifyInstance } from "fastify";
import type { WebSocket } from "ws";
import { isTerminal } from "../store/runStatus.js";
import type { LogLine } from "../store/types.js";
import { toError } from "../shared/toError.js";
import type { ApiDeps } from "./deps.js";
import { notFound } from "./errors.js";
import { pathOf } from "./hooks.js";
import { runIdSchema } from "./schemas.js";

/**
 * `GET /ws/logs/:run_id` (SPEC "WebSocket behaviour", CONTRACT §4).
 *
 * Frames: `{type:"line", seq, ts, stream, line}` in seq order with no gap
 * and no duplicate, then `{type:"end", status}` and close 1000 once the run
 * is SUCCESS, FAILED or SKIPPED. Unknown run: `{type:"error", message}` and
 * close 4404.
 *
 * How "no gap, no duplicate" holds: the stream subscribes to `run:logs`
 * before it reads anything. History is read from the store in pages after
 * the last seq sent; `run:logs` only announces lines that are already
 * durable, so while history is being read the events can be ignored: the
 * last (short) page and the switch to live happen in one synchronous turn,
 * and every line announced before that turn is in the store. Live lines are
 * sent when their seq is the next one; a seq beyond the next (a gap) is
 * filled from the store; a seq already sent is dropped.
 *
 * Backpressure: history is paced by the socket (the next page is read once
 * the client has taken the previous one), so an arbitrarily long history
 * never piles up in memory. Live lines cannot wait: when a client's unsent
 * bytes exceed `maxBufferedBytes` (8 MiB by default) it is closed with
 * 4429 ("too slow"); it may reconnect and resume from history.
 */

export const WS_CLOSE_NORMAL = 1000;
export const WS_CLOSE_NOT_FOUND = 4404;
export const WS_CLOSE_TOO_SLOW = 4429;
export const WS_DEFAULT_MAX_BUFFERED = 8 * 1024 * 1024;

const HISTORY_PAGE = 1000;
/** A client that takes nothing for this long while history waits is dropped. */
const HISTORY_STALL_MS = 30_000;
/** After a close frame, a client that does not finish the handshake is cut. */
const CLOSE_GRACE_MS = 5_000;
/** A client that does not answer a ping within one interval is gone (half-open TCP): cut it. */
export const WS_DEFAULT_HEARTBEAT_MS = 30_000;
/** When buffered lines cannot be written at the end of a run, look again after this long. */
const TERMINAL_RECHECK_MS = 500;

export interface LogStreamOptions {
  maxBufferedBytes: number;
  heartbeatMs: number;
}

export function logStreamRoute(app: FastifyInstance, deps: ApiDeps, opts: LogStreamOptions): void {
  const hub = new LogHub(deps);
  app.get<{ Params: { run_id: number } }>(
    "/ws/logs/:run_id",
    {
      websocket: true,
      schema: {
        summary: "WebSocket: a run's log lines, history then live, then an end frame",
        description:
          'Text frames, one JSON object each: `{"type":"line","seq","ts","stream","line"}`, then `{"type":"end","status"}` and close 1000. ' +
          'Unknown run: `{"type":"error","message"}` and close 4404. A client with more than 8 MiB unsent is closed with 4429.',
        tags: ["runs"],
        params: { type: "object", required: ["run_id"], properties: { run_id: runIdSchema } },
      },
      preHandler: async (request) => {
        if (!request.ws) throw notFound(`${pathOf(request)} is a WebSocket endpoint: connect with an Upgrade: websocket request`);
      },
    },
    (socket, request) => {
      new LogStream(socket, deps, hub, request.params.run_id, opts).start().catch((e: unknown) => {
        deps.log.error({ err: toError(e), run_id: request.params.run_id }, "log stream failed");
        try {
          socket.close(1011, "internal error");
        } catch {
          socket.terminate();
        }
      });
    },
  );
}

/**
 * One subscription to the bus for all streams, while any is open: each
 * batch of lines is split by run and handed only to that run's streams, so
 * many viewers of different runs cost one pass over each batch.
 */
class LogHub {
  private readonly streams = new Map<number, Set<LogStream>>();
  private unsubscribe: (() => void)[] = [];

  constructor(private readonly deps: ApiDeps) {}

  add(runId: number, stream: LogStream): void {
    if (this.streams.size === 0) {
      this.unsubscribe = [
        this.deps.bus.on("run:logs", ({ lines }) => this.onLines(lines)),
        this.deps.bus.on("run:status", ({ run }) => {
          for (const s of this.streams.get(run.id) ?? []) s.statusChanged();
        }),
      ];
    }
    let set = this.streams.get(runId);
    if (!set) this.streams.set(runId, (set = new Set()));
    set.add(stream);
  }

  remove(runId: number, stream: LogStream): void {
    const set = this.streams.get(runId);
    if (!set?.delete(stream)) return;
    if (set.size === 0) this.streams.delete(runId);
    if (this.streams.size === 0) for (const u of this.unsubscribe.splice(0)) u();
  }

  private onLines(lines: LogLine[]): void {
    let byRun: Map<number, LogLine[]> | null = null;
    for (const l of lines) {
      if (!this.streams.has(l.run_id)) continue;
      byRun ??= new Map();
      let list = byRun.get(l.run_id);
      if (!list) byRun.set(l.run_id, (list = []));
      list.push(l);
    }
    if (!byRun) return;
    for (const [runId, list] of byRun) for (const s of [...(this.streams.get(runId) ?? [])]) s.onLines(list);
  }
}

class LogStream {
  private lastSent = 0;
  private phase: "history" | "live" | "closed" = "history";
  private checkQueued = false;
  private alive = true;
  private heartbeat: NodeJS.Timeout | null = null;
  private recheck: NodeJS.Timeout | null = null;

  constructor(
    private readonly socket: WebSocket,
    private readonly deps: ApiDeps,
    private readonly hub: LogHub,
    private readonly runId: number,
    private readonly opts: LogStreamOptions,
  ) {}

  async start(): Promise<void> {
    const { store } = this.deps;
    this.socket.on("close", () => this.cleanup());
    this.socket.on("pong", () => (this.alive = true));
    this.heartbeat = setInterval(() => {
      if (!this.alive) {
        this.socket.terminate();
        return;
      }
      this.alive = false;
      this.socket.ping();
    }, this.opts.heartbeatMs);
    this.heartbeat.unref();
    this.hub.add(this.runId, this);
    if (store.runs.get(this.runId) === null) {
      this.send({ type: "error", message: `run ${this.runId} not found` });
      this.finish(WS_CLOSE_NOT_FOUND, "run not found");
      return;
    }
    await this.sendHistory();
    if (this.phase !== "history") return;
    this.phase = "live";
    this.checkTerminal();
  }

  /**
   * Stored lines after the last one sent, while the client's unsent bytes stay under the low-water mark:
   * a page of 1,000 lines may be 64 MB (lines up to 64 KiB, a progress bar written with \r). Past the
   * mark it waits for the client to take them, then reads on from the last line sent; it goes live only
   * with the history sent and the buffer under the mark, so the first live line does not find the
   * daemon's own backlog over the 4429 limit.
   */
  private async sendHistory(): Promise<void> {
    const lowWater = this.lowWater();
    for (;;) {
      if (this.phase !== "history") return;
      const page = this.deps.store.logs.forRun(this.runId, { afterSeq: this.lastSent, limit: HISTORY_PAGE, offset: 0 });
      let sent = 0;
      while (sent < page.lines.length && this.socket.bufferedAmount <= lowWater) this.sendLine(page.lines[sent++]!);
      if (sent === page.lines.length && page.lines.length < HISTORY_PAGE && this.socket.bufferedAmount <= lowWater) return; // the caller goes live in this same turn
      if (!(await this.drained())) return;
    }
  }

  private lowWater(): number {
    return Math.min(1024 * 1024, this.opts.maxBufferedBytes / 2);
  }

  /** Resolves true once unsent bytes are below the low-water mark, false when the stream ended or stalled. */
  private async drained(): Promise<boolean> {
    const lowWater = this.lowWater();
    let last = this.socket.bufferedAmount;
    let since = Date.now();
    while (this.socket.bufferedAmount > lowWater) {
      await new Promise((r) => setTimeout(r, 10));
      if (this.phase === "closed") return false;
      const now = this.socket.bufferedAmount;
      if (now < last) {
        last = now;
        since = Date.now();
      } else if (Date.now() - since > HISTORY_STALL_MS) {
        this.finish(WS_CLOSE_TOO_SLOW, "client too slow: took nothing for 30 s");
        return false;
      }
    }
    return this.phase !== "closed";
  }

  /** Lines of this run just made durable, in seq order. */
  onLines(lines: LogLine[]): void {
    if (this.phase !== "live") return; // history reads them from the store
    for (const l of lines) {
      if (l.seq <= this.lastSent) continue;
      if (l.seq === this.lastSent + 1) this.sendLine(l);
      else this.catchUp(); // a gap: the store has everything up to l.seq
      if (this.phase !== "live") return;
    }
  }

  /** Sends every stored line after the last one sent. */
  private catchUp(): void {
    for (;;) {
      const page = this.deps.store.logs.forRun(this.runId, { afterSeq: this.lastSent, limit: HISTORY_PAGE, offset: 0 });
      for (const l of page.lines) this.sendLine(l);
      if (page.lines.length < HISTORY_PAGE || this.phase === "closed") return;
    }
  }

  /**
   * After a status event, look at the run's current status on the next
   * turn: a failed attempt goes FAILED -> RETRYING in one step, and only a
   * status that stays terminal ends the stream.
   */
  statusChanged(): void {
    if (this.checkQueued || this.phase !== "live") return;
    this.checkQueued = true;
    setImmediate(() => {
      this.checkQueued = false;
      if (this.phase === "live") this.checkTerminal();
    });
  }

  private checkTerminal(): void {
    const run = this.deps.store.runs.get(this.runId);
    if (run === null) {
      this.send({ type: "error", message: `run ${this.runId} no longer exists (retention)` });
      this.finish(WS_CLOSE_NOT_FOUND, "run not found");
      return;
    }
    if (!isTerminal(run.status)) return;
    // Lines written before the terminal status may still be buffered: make them durable, then send them.
    try {
      this.deps.store.logs.flush();
    } catch {
      // The database refused the write (locked, disk full); the store keeps the lines and retries.
      // The end frame must follow every line: look again shortly.
      this.recheckLater();
      return;
    }
    if (this.phase !== "live") return;
    this.catchUp();
    if (this.phase !== "live") return;
    this.send({ type: "end", status: run.status });
    this.finish(WS_CLOSE_NORMAL, "run finished");
  }

  private recheckLater(): void {
    if (this.recheck !== null) return;
    this.recheck = setTimeout(() => {
      this.recheck = null;
      if (this.phase === "live") this.checkTerminal();
    }, TERMINAL_RECHECK_MS);
    this.recheck.unref();
  }

  private sendLine(l: LogLine): void {
    if (this.phase === "closed") return;
    this.lastSent = l.seq;
    this.send({ type: "line", seq: l.seq, ts: l.ts, stream: l.stream, line: l.line });
    if (this.phase === "live" && this.socket.bufferedAmount > this.opts.maxBufferedBytes) {
      this.finish(WS_CLOSE_TOO_SLOW, `client too slow: over ${Math.round(this.opts.maxBufferedBytes / 1024)} KiB unsent`);
    }
  }

  private send(frame: object): void {
    if (this.phase === "closed" || this.socket.readyState !== this.socket.OPEN) return;
    this.socket.send(JSON.stringify(frame));
  }

  private finish(code: number, reason: string): void {
    if (this.phase === "closed") return;
    this.cleanup();
    const socket = this.socket;
    if (socket.readyState === socket.OPEN) socket.close(code, reason);
    // The close frame waits behind unsent data; a client that reads nothing never answers it.
    const cut = setTimeout(() => socket.terminate(), CLOSE_GRACE_MS);
    cut.unref();
    socket.once("close", () => clearTimeout(cut));
  }

  private cleanup(): void {
    this.phase = "closed";
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.recheck) clearTimeout(this.recheck);
    this.hub.remove(this.runId, this);
  }
}
