import { useState } from "preact/hooks";
import { Dialog } from "./Dialog.js";
import { api, seg } from "../lib/api.js";
import { useAction } from "../lib/useApi.js";
import { notify } from "../lib/notices.js";
import { href } from "../lib/router.js";
import type { StartedRun } from "../lib/types.js";
import { ErrorBox } from "./States.js";
import { fieldErrors, ParamFields, useParamForm } from "./ParamFields.js";

const MAX_REASON = 500;

/**
 * "Run now" with an optional reason (SPEC: free text, at most 500 characters) and the job's
 * params as a form built from its declaration (CONTRACT §7.2); the daemon's validation messages
 * show beside their fields.
 */
export function RunDialog({
  job,
  onClose,
  onStarted,
  from,
}: {
  job: string | null;
  onClose: () => void;
  onStarted?: (r: StartedRun) => void;
  /** "Run again": start from this run's params instead of the defaults (secret ones are typed again). */
  from?: { id: number; params: Record<string, string | number | boolean | null> };
}) {
  const [reason, setReason] = useState("");
  const form = useParamForm(job, from?.params);
  const action = useAction((name: string, text: string) => {
    const body: Record<string, unknown> = text.trim() ? { reason: text.trim() } : {};
    if (form.has) body.params = form.body();
    return api.post<StartedRun>(`api/jobs/${seg(name)}/run`, body);
  });
  const errors = fieldErrors(action.error);
  const close = () => {
    setReason("");
    action.clearError();
    onClose();
  };
  return (
    <Dialog open={job !== null} title={`Run ${job ?? ""} now`} onClose={close} labelledBy="run-title">
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!job) return;
          const started = await action.run(job, reason);
          if (!started) return;
          notify("ok", `Run #${started.run_id} of ${job} started (${started.status})`, {
            href: href(`/runs/${started.run_id}`),
            label: `Open run #${started.run_id}`,
          });
          onStarted?.(started);
          close();
        }}
      >
        {from && form.has && (
          <p class="hint" data-run-again>
            The values of run #{from.id}.
            {Object.values(form.decls).some((d) => d.secret) && " A secret param is not shown: type it again, or its default is used."}
          </p>
        )}
        <ParamFields decls={form.decls} inputs={form.inputs} errors={errors} onChange={form.set} />
        <label class="field">
          Reason (optional)
          <textarea
            name="reason"
            rows={3}
            maxLength={MAX_REASON}
            value={reason}
            onInput={(e) => setReason((e.currentTarget as HTMLTextAreaElement).value)}
            placeholder="Why run it now? Shown in the audit history."
            autoFocus={!form.has}
          />
        </label>
        <p class="hint" aria-live="polite">
          {reason.length}/{MAX_REASON} characters
        </p>
        {form.loadError && <ErrorBox error={form.loadError} title="The job's parameters could not be read: close and try again" />}
        {action.error && <ErrorBox error={action.error} title="The run was not started" />}
        <div class="dialog-actions">
          <button type="button" onClick={close}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={action.busy || !form.ready}>
            {action.busy ? "Starting…" : "Run now"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
