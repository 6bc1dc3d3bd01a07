import { useApi } from "../lib/useApi.js";
import { JsonBlock } from "../components/KeyValues.js";
import { Empty, Loaded } from "../components/States.js";
import { ConfigEditor } from "./ConfigEditor.js";

export function ConfigView() {
  const effective = useApi<{ config: unknown; daemon: unknown }>("api/config");
  const daemon = useApi<{ path: string | null; content: string | null }>("api/config/daemon");
  return (
    <section>
      <div class="view-head">
        <h1>Configuration</h1>
      </div>
      <section class="card">
        <h2>Edit svc.yaml</h2>
        <p class="hint">
          The file as written, secrets included (only roles that may save the config load it). Checked as you type;
          errors are marked at their line. Saving validates again (cycles included), writes the file atomically
          (keeping <code>svc.yaml.bak</code>) and reloads the daemon.
        </p>
        <ConfigEditor
          onSaved={() => {
            // The effective config changes with a save (and svcd.yaml's view with a reload).
            void effective.reload();
            void daemon.reload();
          }}
        />
      </section>
      <div class="grid2">
        <section class="card">
          <h2>Effective svc.yaml</h2>
          <p class="hint">Defaults applied; secrets shown as ***.</p>
          <Loaded state={effective} what="Loading the effective config">
            {(c) => <JsonBlock value={c.config} label="Effective svc.yaml" />}
          </Loaded>
        </section>
        <section class="card">
          <h2>Daemon config (svcd.yaml)</h2>
          <Loaded state={daemon} what="Loading svcd.yaml">
            {(d) =>
              d.content === null ? (
                <Empty>No svcd.yaml: every daemon setting has its default.</Empty>
              ) : (
                <>
                  <p class="hint">
                    <code>{d.path}</code> (read-only; secrets shown as ***)
                  </p>
                  <pre class="code-view" tabIndex={0} aria-label="svcd.yaml">
                    {d.content}
                  </pre>
                </>
              )
            }
          </Loaded>
          <Loaded state={effective} what="Loading">
            {(c) => (
              <details>
                <summary>Effective daemon settings</summary>
                <JsonBlock value={c.daemon} label="Effective svcd.yaml" />
              </details>
            )}
          </Loaded>
        </section>
      </div>
    </section>
  );
}
