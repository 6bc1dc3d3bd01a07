import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { qs, request } from "../../lib/api.js";
import { toApiError } from "../../lib/useApi.js";
import type { ApiError } from "../../lib/api.js";
import { useStore } from "../../lib/store.js";
import { signInEpoch } from "../../lib/auth.js";
import { followChanges, type Filters, type TimelineAnswer } from "./live.js";
import { MAX_SPAN, parseRuns, type TLRun, type View } from "./model.js";

export interface TimelineData {
  jobs: string[];
  runs: Map<number, TLRun>;
  /** Bumped on every change, for memoisation. */
  version: number;
  truncated: boolean;
  limit: number;
  loaded: View;
}

/** The window to load for a view: half a span more on each side (pans and zooms out stay loaded), at most 31 days. */
export function loadRange(view: View): View {
  const span = view.to - view.from;
  const margin = Math.max(0, Math.min(span / 2, (MAX_SPAN - span) / 2));
  return { from: Math.round(view.from - margin), to: Math.round(view.to + margin) };
}

export const covers = (outer: View, inner: View) => outer.from <= inner.from && outer.to >= inner.to;

/**
 * Loads `GET /api/timeline` for `range` and then follows
 * `/api/timeline/changes` (live.ts), merging each changed run in. The
 * daemon's clock is kept as an offset from the browser's, so running bars
 * and the now line use the daemon's now.
 */
export function useTimeline(range: View, filters: Filters) {
  const [data, setData] = useState<TimelineData | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [conn, setConn] = useState<"loading" | "live" | "reconnecting">("loading");
  const [reloads, setReloads] = useState(0);
  const offset = useRef(0);
  const epoch = useStore(signInEpoch);

  useEffect(() => {
    const abort = new AbortController();
    let stop = () => {};
    setConn("loading");
    const path = `api/timeline${qs({ from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString(), tag: filters.tag, q: filters.q })}`;
    request<TimelineAnswer>("GET", path, undefined, abort.signal).then(
      (answer) => {
        if (abort.signal.aborted) return;
        offset.current = Date.parse(answer.now) - Date.now();
        const runs = new Map(parseRuns(answer.columns, answer.runs).map((r) => [r.id, r]));
        setData({ jobs: answer.jobs, runs, version: 0, truncated: answer.truncated, limit: answer.limit, loaded: range });
        setError(null);
        setConn("live");
        stop = followChanges(answer.cursor, filters, {
          onRuns: (changed) =>
            setData((d) => {
              if (!d) return d;
              const next = new Map(d.runs);
              for (const r of changed) next.set(r.id, r);
              return { ...d, runs: next, version: d.version + 1 };
            }),
          onReset: () => setReloads((n) => n + 1),
          onState: setConn,
        });
      },
      (e: unknown) => {
        if (abort.signal.aborted) return;
        setError(toApiError(e));
        setConn("reconnecting");
      },
    );
    return () => {
      abort.abort();
      stop();
    };
  }, [range.from, range.to, filters.tag, filters.q, reloads, epoch]);

  const now = useCallback(() => Date.now() + offset.current, []);
  const reload = useCallback(() => setReloads((n) => n + 1), []);
  return { data, error, conn, now, reload };
}
