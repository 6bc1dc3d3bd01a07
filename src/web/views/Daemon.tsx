import { useState } from "preact/hooks";
import { api } from "../lib/api.js";
import { useAction, useApi } from "../lib/useApi.js";
import type { DaemonInfo, StatusResponse } from "../lib/types.js";
import { notify } from "../lib/notices.js";
import { fmtDuration } from "../lib/format.js";
import { KeyValues } from "../components/KeyValues.js";
import { Badge } from "../components/StatusBadge.js";
import { ErrorBox, Loaded } from "../components/States.js";
import { Time } from "../components/Time.js";
import { ConfirmDialog } from "../components/ConfirmDialog.js";

export function DaemonView() {
  const info = useApi<DaemonInfo>("api/daemon/info", 10_000);
  const status = useApi<StatusResponse>("api/status", 5000);
  const [confirmStop, setConfirmStop] = useState(false);
  const [stopped, setStopped] = useState(false);
  const reload = useAction(async () => {
    await api.post("api/daemon/reload");
    notify("ok", "Configuration reloaded");
    await Promise.all([info.reload(), status.reload()]);
  });
  const stop = useAction(async () => {
    await api.post("api/daemon/stop");
    setConfirmStop(false);
    setStopped(true);
    notify("info", "The daemon is stopping: running jobs are drained first");
  });
  return (
    <section>
      <div class="view-head">
        <h1>Daemon</h1>
        {status.data && <Badge tone={status.data.status === "ok" ? "ok" : "warn"}>{status.data.status}</Badge>}
        <div class="head-actions">
          <button type="button" disabled={reload.busy || stopped} onClick={() => void reload.run()}>
            {reload.busy ? "Reloading…" : "Reload config"}
          </button>
          <button type="button" class="danger" disabled={stopped} onClick={() => setConfirmStop(true)}>
            Stop daemon…
          </button>
        </div>
      </div>
      {stopped && (
        <p class="state empty" role="status">
          Stop requested. The dashboard will lose its connection once the daemon exits; start it again with{" "}
          <code>svc start</code>.
        </p>
      )}
      {reload.error && <ErrorBox error={reload.error} title="Reload rejected; the old config stays" />}
      <div class="grid2">
        <section class="card">
          <h2>Process</h2>
          <Loaded state={info} what="Loading daemon info">
            {(d) => (
              <KeyValues
                items={[
                  ["Version", d.version],
                  ["PID", d.pid],
                  ["Started", <Time iso={d.started_at} />],
                  ["Config file", <code>{d.config_path}</code>],
                  ["Daemon config", d.daemon_config_path ? <code>{d.daemon_config_path}</code> : <span class="muted">none (defaults)</span>],
                  ["Database", <code>{d.database_path}</code>],
                  ["Jobs", `${d.total_jobs} total, ${d.active_jobs} active, ${d.paused_jobs} paused`],
                ]}
              />
            )}
          </Loaded>
        </section>
        <section class="card">
          <h2>Status</h2>
          <Loaded state={status} what="Loading status">
            {(s) => (
              <KeyValues
                items={[
                  ["Health", s.status],
                  ["Uptime", fmtDuration(s.uptime_s * 1000)],
                  ["Version", s.version],
                  ["Jobs total", s.jobs.total],
                  ["Active", s.jobs.active],
                  ["Paused", s.jobs.paused],
                  ["Running", s.jobs.running],
                ]}
              />
            )}
          </Loaded>
        </section>
      </div>
      <ConfirmDialog
        open={confirmStop}
        title="Stop the daemon?"
        confirmLabel={stop.busy ? "Stopping…" : "Stop daemon"}
        danger
        busy={stop.busy}
        onConfirm={() => void stop.run()}
        onClose={() => setConfirmStop(false)}
      >
        <p>
          svcd stops gracefully: running jobs are drained (bounded by <code>scheduler.shutdown_timeout</code>) and nothing new is
          scheduled. The dashboard cannot start it again.
        </p>
        {stop.error && <ErrorBox error={stop.error} />}
      </ConfirmDialog>
    </section>
  );
}
