import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, request } from "./api.js";
import { signInEpoch } from "./auth.js";
import { useStore } from "./store.js";

export interface ApiState<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload: () => Promise<void>;
}

export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  return new ApiError(0, "client", e instanceof Error ? e.message : String(e));
}

/**
 * GET `path` (null: nothing to load) and, with `pollMs`, again every pollMs
 * while the tab is visible; a hidden tab stops polling and refreshes once
 * when shown again. The last data stays on screen while a new load runs.
 */
export function useApi<T>(path: string | null, pollMs = 0): ApiState<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [loading, setLoading] = useState(path !== null);
  const epoch = useStore(signInEpoch);
  const latest = useRef(0);

  const load = useCallback(async () => {
    if (path === null) return;
    const id = ++latest.current;
    setLoading(true);
    try {
      const body = await request<T>("GET", path);
      if (id !== latest.current) return; // an answer to an older question
      setData(body);
      setError(undefined);
    } catch (e) {
      if (id !== latest.current) return;
      setError(toApiError(e));
    } finally {
      if (id === latest.current) setLoading(false);
    }
  }, [path]);

  useEffect(() => {
    if (path === null) {
      setLoading(false);
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    let inFlight = false;
    const tick = async () => {
      if (inFlight) return;
      inFlight = true;
      clearTimeout(timer);
      await load();
      inFlight = false;
      if (!stopped && pollMs > 0 && !document.hidden) timer = setTimeout(tick, pollMs);
    };
    const onVisibility = () => {
      if (document.hidden) clearTimeout(timer);
      else void tick();
    };
    void tick();
    if (pollMs > 0) document.addEventListener("visibilitychange", onVisibility);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisibility);
    };
  }, [load, pollMs, epoch]);

  return { data, error, loading, reload: load };
}

/** A POST button's lifecycle: busy flag, last error, and the call. */
export function useAction<A extends unknown[], R>(fn: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const run = useCallback(
    async (...args: A): Promise<R | undefined> => {
      setBusy(true);
      setError(undefined);
      try {
        return await fn(...args);
      } catch (e) {
        setError(toApiError(e));
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [fn],
  );
  return { busy, error, run, clearError: () => setError(undefined) };
}
