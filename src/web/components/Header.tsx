import { useApi } from "../lib/useApi.js";
import type { StatusResponse } from "../lib/types.js";
import { openPrompt, promptStore, getToken, signOut } from "../lib/auth.js";
import { useStore } from "../lib/store.js";
import { Badge } from "./StatusBadge.js";

const NAV: [string, string, string][] = [
  ["", "#/", "Overview"],
  ["timeline", "#/timeline", "Timeline"],
  ["upcoming", "#/upcoming", "Upcoming"],
  ["graph", "#/graph", "Graph"],
  ["audit", "#/audit", "Audit"],
  ["backfills", "#/backfills", "Backfills"],
  ["db", "#/db/job_runs", "Database"],
  ["integrations", "#/integrations", "Integrations"],
  ["config", "#/config", "Config"],
  ["daemon", "#/daemon", "Daemon"],
];

/** Navigation plus the version badge (SPEC Versioning 1) and the daemon's reachability. */
export function Header({ section }: { section: string }) {
  const status = useApi<StatusResponse>("api/status", 15_000);
  const prompt = useStore(promptStore);
  const current = section === "jobs" || section === "runs" ? "" : section;
  return (
    <header class="topbar">
      <a class="brand" href="#/">
        svc
      </a>
      <nav aria-label="Main">
        <ul>
          {NAV.map(([key, link, label]) => (
            <li key={key}>
              <a href={link} aria-current={current === key ? "page" : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div class="topbar-end">
        {status.data ? (
          <span class="version" title={`daemon up since ${status.data.started_at}`} data-testid="version">
            v{status.data.version}
          </span>
        ) : status.error ? (
          <Badge tone={status.error.status === 401 ? "warn" : "bad"} title={status.error.message}>
            {status.error.status === 401 ? "signed out" : "daemon unreachable"}
          </Badge>
        ) : null}
        {prompt.dismissed && (
          <button type="button" onClick={openPrompt}>
            Sign in
          </button>
        )}
        {getToken() && !prompt.open && !prompt.dismissed && (
          <button
            type="button"
            class="link"
            onClick={() => {
              signOut();
              location.reload();
            }}
          >
            Sign out
          </button>
        )}
      </div>
    </header>
  );
}
