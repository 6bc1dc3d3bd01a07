import { api, seg } from "../lib/api.js";
import { useAction } from "../lib/useApi.js";
import { notify } from "../lib/notices.js";
import { href } from "../lib/router.js";
import type { StartedRun } from "../lib/types.js";
import { ErrorBox } from "./States.js";

export type RunOp = "retry" | "cancel" | "skip";

/**
 * The job-level run operations (CONTRACT §3): retry the most recent run when
 * it FAILED, cancel every RUNNING/RETRYING run, skip the oldest PENDING run.
 * Buttons only appear where the state allows; a 409 from a race is shown.
 */
export function JobActions({
  job,
  allowed,
  labels = {},
  onDone,
}: {
  job: string;
  allowed: Record<RunOp, boolean>;
  /** A button's text when it says more than the default ("Cancel all 3 runs of extract"). */
  labels?: Partial<Record<RunOp, string>>;
  onDone: () => void;
}) {
  const action = useAction(async (op: RunOp) => {
    const res = await api.post<StartedRun | null>(`api/jobs/${seg(job)}/${op}`);
    if (op === "retry" && res && typeof res === "object" && "run_id" in res) {
      notify("ok", `Retry of ${job} started as run #${res.run_id}`, { href: href(`/runs/${res.run_id}`), label: `Open run #${res.run_id}` });
    } else {
      notify("ok", op === "cancel" ? `Cancel sent to ${job}` : `Pending run of ${job} skipped`);
    }
    onDone();
  });
  const ops = (["retry", "cancel", "skip"] as const).filter((op) => allowed[op]);
  if (ops.length === 0 && !action.error) return null;
  const label: Record<RunOp, string> = { retry: "Retry", cancel: "Cancel run", skip: "Skip pending run", ...labels };
  return (
    <div class="run-ops">
      {ops.map((op) => (
        <button key={op} type="button" class={op === "cancel" ? "danger" : undefined} disabled={action.busy} onClick={() => void action.run(op)}>
          {label[op]}
        </button>
      ))}
      {action.error && <ErrorBox error={action.error} title="The operation was refused" />}
    </div>
  );
}
