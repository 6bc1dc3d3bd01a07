/**
 * Following a run's log live through `GET /ws/logs/:run_id` (CONTRACT §4):
 * `{type:"line", seq, ts, stream, line}` frames (history, then live), then
 * `{type:"end", status}` and close 1000. A close without an end frame means
 * the daemon went away: one clear line, exit 1. A 4429 close (client too
 * slow) reconnects and drops the seqs already seen. A ping every 15 s finds
 * a daemon that stopped answering without closing the connection.
 */
import type WebSocket from "ws";
import type * as Ws from "ws";
import { CliError } from "../output.js";
import { logHint, transportError, unauthorized } from "./errors.js";
import { joinPath, type DaemonClient } from "./http.js";

export interface LogLine {
  seq: number;
  ts: string;
  stream: string;
  line: string;
}

export interface RunFollower {
  /** Resolves with the run's terminal status; rejects with a CliError. */
  done: Promise<string>;
  /** Stops following (the promise then never settles). */
  close(): void;
}

const PING_EVERY_MS = 15_000;
const CLOSE_TOO_SLOW = 4429;
const CLOSE_NOT_FOUND = 4404;
const MAX_RECONNECTS = 5;

type WsModule = typeof Ws;
let wsModule: Promise<WsModule> | null = null;
/** `ws` is loaded only by the commands that follow logs, to keep the others fast. */
function loadWs(): Promise<WsModule> {
  wsModule ??= import("ws");
  return wsModule;
}

/** `afterSeq`: lines up to this seq were already shown (printed from GET /api/runs/:id/logs): skip them. */
export function followRun(client: DaemonClient, runId: number, onLine: (l: LogLine) => void, afterSeq = 0): RunFollower {
  let closed = false;
  let socket: WebSocket | null = null;
  let lastSeq = afterSeq;
  let reconnects = 0;
  const what = `following run ${runId}`;

  const done = new Promise<string>((resolve, reject) => {
    const fail = (e: CliError) => {
      if (!closed) reject(e);
      closed = true;
    };
    const open = async () => {
      const { default: WebSocketCtor } = await loadWs();
      const { headers, tls } = client.connectOptions();
      const t = client.target;
      const path = `/ws/logs/${runId}`;
      const url =
        t.kind === "unix"
          ? `ws+unix://${t.socketPath}:${path}`
          : `${t.url.protocol === "https:" ? "wss" : "ws"}://${t.url.host}${joinPath(t, path)}`;
      const ws = new WebSocketCtor(url, { headers, ...tls, handshakeTimeout: client.timeoutMs, perMessageDeflate: false });
      socket = ws;
      let ended: string | null = null;
      let alive = true;
      const ping = setInterval(() => {
        if (!alive) {
          ws.terminate();
          fail(new CliError(`the daemon stopped answering while ${what} (no pong in ${PING_EVERY_MS / 1000} s)${logHint(t)}`));
          return;
        }
        alive = false;
        ws.ping();
      }, PING_EVERY_MS);
      ws.on("pong", () => (alive = true));
      ws.on("message", (data: WebSocket.RawData) => {
        alive = true;
        let frame: { type?: string; seq?: number; status?: string; message?: string } & Partial<LogLine>;
        try {
          frame = JSON.parse(data.toString()) as typeof frame;
        } catch {
          return; // not ours: ignore
        }
        if (frame.type === "line" && typeof frame.seq === "number") {
          if (frame.seq <= lastSeq) return; // already printed before a reconnect
          lastSeq = frame.seq;
          if (!closed) onLine({ seq: frame.seq, ts: frame.ts ?? "", stream: frame.stream ?? "stdout", line: frame.line ?? "" });
        } else if (frame.type === "end") {
          ended = frame.status ?? "UNKNOWN";
        } else if (frame.type === "error") {
          fail(new CliError(frame.message ?? `run ${runId}: the daemon refused the log stream`));
        }
      });
      ws.on("unexpected-response", (_req, res) => {
        ws.terminate();
        if (res.statusCode === 401) fail(unauthorized(t));
        else if (res.statusCode === 404) fail(new CliError(`run ${runId} not found`));
        else fail(new CliError(`the daemon refused ${what}: HTTP ${res.statusCode ?? "?"} ${res.statusMessage ?? ""}`.trim()));
      });
      ws.on("error", (e) => fail(transportError(t, e, what)));
      ws.on("close", (code: number, reason: Buffer) => {
        clearInterval(ping);
        if (closed) return;
        if (ended !== null) {
          closed = true;
          resolve(ended);
        } else if (code === CLOSE_NOT_FOUND) {
          fail(new CliError(`run ${runId} not found`));
        } else if (code === CLOSE_TOO_SLOW && reconnects < MAX_RECONNECTS) {
          reconnects++;
          open().catch((e: unknown) => fail(transportError(t, e, what)));
        } else {
          const why = reason.length > 0 ? `: ${reason.toString()}` : "";
          fail(new CliError(`lost the connection to the daemon while ${what} (close code ${code}${why}): the daemon stopped or died${logHint(t)}`));
        }
      });
    };
    open().catch((e: unknown) => fail(e instanceof CliError ? e : transportError(client.target, e, what)));
  });

  return {
    done,
    close() {
      closed = true;
      socket?.terminate();
    },
  };
}
