import { wsUrl } from "./base.js";
import { getToken } from "./auth.js";
import { request, seg } from "./api.js";
import { isTerminal, type LogLineMsg, type RunStatus } from "./types.js";

export interface LogStreamHandlers {
  /** New lines in seq order, never a seq twice (reconnects resend history; it is dropped here). */
  onLines(lines: LogLineMsg[]): void;
  onEnd(status: RunStatus): void;
  /** Connection state for the UI: "live", "reconnecting", or a failure text. */
  onState(state: "connecting" | "live" | "reconnecting" | "ended" | { error: string }): void;
}

type Frame =
  | ({ type: "line" } & LogLineMsg)
  | { type: "end"; status: RunStatus }
  | { type: "error"; message?: string; error?: string };

const FLUSH_MS = 50;
const MAX_RETRIES = 5;
/** While the daemon cannot be reached, how often to look again. */
const RECONNECT_MS = 5_000;
/** Following over REST (no WebSocket): how often, and lines per request. */
const REST_POLL_MS = 2_000;
const REST_PAGE = 10_000;

/**
 * Follow `/ws/logs/:runId` (CONTRACT §4): history, then live lines, then an
 * `end` frame and close 1000. The token goes as the `bearer.<token>`
 * subprotocol, since browsers cannot set headers on a WebSocket. Lines are
 * handed over in batches so a fast writer does not re-render per line. An
 * unexpected close reconnects (deduplicated by seq); a close after
 * repeated failures falls back to the REST log list. Returns a stop function.
 */
export function followLogs(runId: number, handlers: LogStreamHandlers): () => void {
  let lastSeq = 0;
  let buffer: LogLineMsg[] = [];
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let socket: WebSocket | null = null;
  let stopped = false;
  let ended = false;
  let retries = 0;

  const flush = () => {
    flushTimer = undefined;
    if (buffer.length === 0) return;
    const batch = buffer;
    buffer = [];
    handlers.onLines(batch);
  };
  const push = (line: LogLineMsg) => {
    if (line.seq <= lastSeq) return;
    lastSeq = line.seq;
    buffer.push(line);
    flushTimer ??= setTimeout(flush, FLUSH_MS);
  };
  const finish = (status: RunStatus) => {
    if (ended) return;
    ended = true;
    flush();
    handlers.onEnd(status);
    handlers.onState("ended");
  };

  /**
   * REST fallback, until the run ends: every line after lastSeq (page by page), then the run record; while
   * it is not over, again in REST_POLL_MS. A failed poll is tried again the same way.
   */
  const followRest = async (): Promise<void> => {
    if (stopped || ended) return;
    try {
      for (;;) {
        const body = await request<{ lines: LogLineMsg[] }>("GET", `api/runs/${seg(runId)}/logs?offset=${lastSeq}&limit=${REST_PAGE}`);
        for (const l of body.lines) push(l);
        if (body.lines.length < REST_PAGE) break;
      }
      flush();
      const run = await request<{ status: RunStatus }>("GET", `api/runs/${seg(runId)}`);
      if (isTerminal(run.status)) return finish(run.status);
    } catch {
      // The daemon restarting, a dropped connection: the next poll tries again.
    }
    if (!stopped && !ended) retryTimer = setTimeout(() => void followRest(), REST_POLL_MS);
  };

  const connect = () => {
    if (stopped) return;
    handlers.onState(retries === 0 ? "connecting" : "reconnecting");
    const token = getToken();
    try {
      socket = token
        ? new WebSocket(wsUrl(`ws/logs/${seg(runId)}`), [`bearer.${token}`])
        : new WebSocket(wsUrl(`ws/logs/${seg(runId)}`));
    } catch (e) {
      // A token with characters a subprotocol cannot carry: read the logs over REST instead.
      handlers.onState({ error: `live logs unavailable: ${e instanceof Error ? e.message : String(e)}` });
      void followRest();
      return;
    }
    socket.onopen = () => {
      retries = 0;
      handlers.onState("live");
    };
    socket.onmessage = (ev) => {
      let frame: Frame;
      try {
        frame = JSON.parse(String(ev.data)) as Frame;
      } catch {
        return; // not ours
      }
      if (frame.type === "line") push(frame);
      else if (frame.type === "end") finish(frame.status);
      else if (frame.type === "error") {
        handlers.onState({ error: frame.message ?? frame.error ?? "log stream error" });
        stopped = true;
      }
    };
    socket.onclose = (ev) => {
      socket = null;
      flush();
      if (stopped || ended) return;
      if (ev.code === 4404) {
        handlers.onState({ error: "run not found" });
        return;
      }
      if (ev.code === 1000) return; // closed cleanly without an end frame: nothing more will come
      if (retries >= MAX_RETRIES) {
        handlers.onState({ error: "live log stream lost; following the stored lines" });
        void followRest();
        return;
      }
      retries++;
      handlers.onState("reconnecting");
      retryTimer = setTimeout(reconnect, 500 * 2 ** retries);
    };
  };

  /**
   * A REST call first (if the refusal was a 401 it opens the token prompt), then the WebSocket again. While the
   * daemon cannot be reached (restarting) it says so and keeps trying every RECONNECT_MS.
   */
  const reconnect = () => {
    if (stopped || ended) return;
    void request("GET", `api/runs/${seg(runId)}`).then(connect, (e: unknown) => {
      handlers.onState({ error: e instanceof Error ? e.message : String(e) });
      if (!stopped && !ended) retryTimer = setTimeout(reconnect, RECONNECT_MS);
    });
  };

  connect();
  return () => {
    stopped = true;
    clearTimeout(flushTimer);
    clearTimeout(retryTimer);
    socket?.close(1000);
  };
}
