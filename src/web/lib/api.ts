import { apiUrl } from "./base.js";
import { getToken, waitForToken } from "./auth.js";

/** An API failure, from the `{error: {code, message, details}}` body (CONTRACT §4). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export type QueryValue = string | number | boolean | null | undefined;

/** `{a: 1, b: "", c: null}` -> `?a=1` (empty values are left out). */
export function qs(params: Record<string, QueryValue>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === null || v === undefined || v === "") continue;
    q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

async function errorFrom(res: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    // not JSON (proxy page, empty body): fall back to the status text
  }
  const err = (body as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
  return new ApiError(
    res.status,
    err?.code ?? `http_${res.status}`,
    err?.message ?? (res.statusText || `HTTP ${res.status}`),
    err?.details,
  );
}

/**
 * One JSON request. A 401 opens the token prompt and retries with the new
 * token; a dismissed prompt turns into the 401 error.
 */
export async function request<T>(method: "GET" | "POST", path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  for (;;) {
    const token = getToken();
    const headers: Record<string, string> = { Accept: "application/json" };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let res: Response;
    try {
      res = await fetch(apiUrl(path), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: "no-store",
        signal,
      });
    } catch (e) {
      if (signal?.aborted) throw e;
      throw new ApiError(0, "network", `Cannot reach the daemon (${e instanceof Error ? e.message : String(e)})`);
    }
    if (res.status === 401) {
      // Sent with a token replaced since (a sign-in while it was in flight): try again with the new one,
      // instead of asking again for the token the user has just given.
      if (getToken() !== token) continue;
      const err = await errorFrom(res);
      try {
        await waitForToken(token !== null);
      } catch {
        throw err;
      }
      continue;
    }
    if (!res.ok) throw await errorFrom(res);
    const text = await res.text();
    return (text ? JSON.parse(text) : null) as T;
  }
}

export const api = {
  get: <T>(path: string, query: Record<string, QueryValue> = {}) => request<T>("GET", path + qs(query)),
  post: <T>(path: string, body: unknown = {}) => request<T>("POST", path, body),
};

/** Path segment escaping for job names and ids. */
export const seg = (s: string | number) => encodeURIComponent(String(s));
