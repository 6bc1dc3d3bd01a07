/**
 * Where the daemon mounted the dashboard. The page is served at `/` or under
 * `api.base_path` (`/svc/`), and the API and WebSocket live beside it, so
 * every URL is built from the page's directory, never from the site root.
 */
export function pageBase(pathname: string = location.pathname): string {
  const slash = pathname.lastIndexOf("/");
  return slash < 0 ? "/" : pathname.slice(0, slash + 1);
}

/** `api/jobs` -> `/svc/api/jobs` when the page is `/svc/`. */
export function apiUrl(path: string): string {
  return pageBase() + path.replace(/^\/+/, "");
}

/** `ws/logs/7` -> `wss://host/svc/ws/logs/7` (ws: or wss: follows the page). */
export function wsUrl(path: string): string {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  return `${proto}//${location.host}${apiUrl(path)}`;
}
