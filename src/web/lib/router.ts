import { useEffect, useState } from "preact/hooks";
import type { QueryValue } from "./api.js";

/**
 * Hash routes (`#/jobs/extract`, `#/db/job_runs?status=failed&page=2`): every
 * view and every filter has a real URL, and the daemon only ever serves one
 * page.
 */
export interface Route {
  parts: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, "");
  const q = raw.indexOf("?");
  const path = q < 0 ? raw : raw.slice(0, q);
  const query = new URLSearchParams(q < 0 ? "" : raw.slice(q + 1));
  const parts = path
    .split("/")
    .filter((p) => p !== "")
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  return { parts, query };
}

export function href(path: string, query: Record<string, QueryValue> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== null && v !== undefined && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return `#${path.startsWith("/") ? path : `/${path}`}${s ? `?${s}` : ""}`;
}

export function navigate(path: string, query: Record<string, QueryValue> = {}, replace = false): void {
  const target = href(path, query);
  if (replace) {
    history.replaceState(history.state, "", target);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  } else {
    location.hash = target;
  }
}

/**
 * What to ask before the route changes, or null: set by a view with work that
 * leaving would lose (the config editor's unsaved edits). Links, the back
 * button and navigate() all change the hash, so the app's one hashchange
 * listener (useRoute) asks; declined, the address goes back to the view.
 */
let leaveQuestion: string | null = null;

/** Ask `question` before any change of the route; null stops asking. */
export function askBeforeLeaving(question: string | null): void {
  leaveQuestion = question;
}

/** The app's route (one per page: app.tsx). */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    let shown = location.hash;
    const onChange = () => {
      if (location.hash === shown) return;
      if (leaveQuestion !== null && !window.confirm(leaveQuestion)) {
        // Stay: the address shows the view again (the entry the link added now holds it too).
        history.replaceState(history.state, "", shown || "#/");
        return;
      }
      leaveQuestion = null;
      shown = location.hash;
      setRoute(parseHash(shown));
    };
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

/** The current route's path, e.g. `/db/job_runs`. */
export function routePath(route: Route): string {
  return `/${route.parts.map(encodeURIComponent).join("/")}`;
}

/**
 * Change some query values of the current route (null/"" removes them) and
 * keep the rest: filters live in the URL.
 */
export function patchQuery(route: Route, patch: Record<string, QueryValue>, replace = false): void {
  const next: Record<string, QueryValue> = Object.fromEntries(route.query.entries());
  Object.assign(next, patch);
  navigate(routePath(route), next, replace);
}
