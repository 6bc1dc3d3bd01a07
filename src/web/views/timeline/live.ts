import { qs, request } from "../../lib/api.js";
import { parseRuns, type TLRun } from "./model.js";

export interface TimelineAnswer {
  from: string;
  to: string;
  now: string;
  cursor: string;
  truncated: boolean;
  limit: number;
  jobs: string[];
  columns: string[];
  runs: unknown[][];
}

interface ChangesAnswer {
  cursor: string;
  reset: boolean;
  columns: string[];
  runs: unknown[][];
}

export interface Filters {
  tag: string | null;
  q: string | null;
}

const WAIT_S = 25;
const MAX_BACKOFF_MS = 30_000;

/**
 * Follows `GET /api/timeline/changes` from `cursor`: one held request at a
 * time, answered by the daemon when a run is created, starts, retries or
 * ends (docs/API.md). No polling: an idle daemon answers every 25 s with
 * nothing. `onReset`: the cursor is gone (the daemon restarted): load the
 * window again. Network errors retry with a growing pause. Returns stop.
 */
export function followChanges(
  cursor: string,
  filters: Filters,
  handlers: { onRuns(runs: TLRun[]): void; onReset(): void; onState(state: "live" | "reconnecting"): void },
): () => void {
  const abort = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let backoff = 1000;
  const loop = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      try {
        const path = `api/timeline/changes${qs({ cursor, wait: WAIT_S, tag: filters.tag, q: filters.q })}`;
        const answer = await request<ChangesAnswer>("GET", path, undefined, abort.signal);
        if (abort.signal.aborted) return;
        backoff = 1000;
        handlers.onState("live");
        if (answer.reset) {
          handlers.onReset();
          return;
        }
        cursor = answer.cursor;
        if (answer.runs.length > 0) handlers.onRuns(parseRuns(answer.columns, answer.runs));
      } catch {
        if (abort.signal.aborted) return;
        handlers.onState("reconnecting");
        await new Promise<void>((resolve) => (timer = setTimeout(resolve, backoff)));
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
      }
    }
  };
  void loop();
  return () => {
    abort.abort();
    clearTimeout(timer);
  };
}
