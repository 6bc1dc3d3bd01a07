import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { Dialog } from "./Dialog.js";
import { api, seg } from "../lib/api.js";
import { useAction } from "../lib/useApi.js";
import { notify } from "../lib/notices.js";
import { href, navigate } from "../lib/router.js";
import type { BackfillRecord } from "../lib/types.js";
import { ErrorBox } from "./States.js";
import { fieldErrors, ParamFields, pathErrors, useParamForm } from "./ParamFields.js";

const MAX_REASON = 500;
/** Slots listed in the preview; the count covers them all. */
const PREVIEW_ROWS = 100;

interface PlannedSlot {
  utc: string;
  local: string;
  note: string | null;
  excluded: string | null;
  existing_run: number | null;
  will_run: boolean;
}

interface DryRun {
  job: string;
  timezone: string;
  from: string;
  to: string;
  slots: PlannedSlot[];
  runs: number;
  /** Slots of the range still ahead, left to the scheduler (not in slots). */
  after_now?: number;
}

interface Started {
  backfill_id: number;
  slots: number;
  runs: number;
  existing?: number;
  excluded?: number;
  backfill?: BackfillRecord;
}

function Field({ id, label, error, hint, children }: { id: string; label: string; error?: string; hint?: string; children: ComponentChildren }) {
  return (
    <div class={`field param${error ? " invalid" : ""}`} data-field={id}>
      <label for={`bf-${id}`}>{label}</label>
      {children}
      {hint && (
        <p class="hint" id={`bf-${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`bf-${id}-error`} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * Backfill a job's scheduled slots in [from, to) (CONTRACT §7.3) from its page: the range, how
 * many at once, rerun / ignore-exclude, the job's params as in the run dialog; "Preview" asks
 * for a dry run (the slots with their local times and DST notes), "Start" creates the backfill
 * and opens its page. The daemon's messages show beside their fields.
 */
export function BackfillDialog({ job, onClose }: { job: string | null; onClose: () => void }) {
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [parallel, setParallel] = useState("1");
  const [rerun, setRerun] = useState(false);
  const [ignoreExclude, setIgnoreExclude] = useState(false);
  const [reason, setReason] = useState("");
  const [preview, setPreview] = useState<DryRun | null>(null);
  const form = useParamForm(job);

  const body = (dryRun: boolean) => {
    const b: Record<string, unknown> = { from: from.trim(), to: to.trim(), rerun, ignore_exclude: ignoreExclude, dry_run: dryRun };
    const n = Number(parallel);
    b.parallel = parallel.trim() !== "" && Number.isInteger(n) ? n : parallel;
    if (reason.trim()) b.reason = reason.trim();
    if (form.has) b.params = form.body();
    return b;
  };
  const action = useAction(async (name: string, dryRun: boolean) => {
    if (dryRun) {
      setPreview(await api.post<DryRun>(`api/jobs/${seg(name)}/backfill`, body(true)));
      return null;
    }
    return api.post<Started>(`api/jobs/${seg(name)}/backfill`, body(false));
  });
  const errors = pathErrors(action.error);
  const close = () => {
    setPreview(null);
    action.clearError();
    onClose();
  };
  const describedBy = (id: string, hint: boolean) => [hint ? `bf-${id}-hint` : "", errors[id] ? `bf-${id}-error` : ""].filter((x) => x).join(" ") || undefined;
  // A change of the inputs makes an earlier preview stale.
  const edit = <T,>(set: (v: T) => void) => (v: T) => {
    set(v);
    setPreview(null);
  };
  const instantHint = "A date (UTC midnight) or an instant with a zone: 2026-11-01, 2026-11-01T06:00:00Z, 2026-11-01T01:00-05:00.";

  return (
    <Dialog open={job !== null} title={`Backfill ${job ?? ""}`} onClose={close} labelledBy="backfill-title">
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!job) return;
          const dryRun = (e as SubmitEvent).submitter?.getAttribute("value") === "preview";
          const started = await action.run(job, dryRun);
          if (!started) return;
          notify("ok", `Backfill #${started.backfill_id} of ${job} started: ${started.runs} run${started.runs === 1 ? "" : "s"}`, {
            href: href(`/backfills/${started.backfill_id}`),
            label: `Open backfill #${started.backfill_id}`,
          });
          close();
          navigate(`/backfills/${started.backfill_id}`);
        }}
      >
        <p class="hint">{instantHint} The range is [from, to): from included, to excluded.</p>
        <div class="backfill-range">
          <Field id="from" label="From (included)" error={errors.from}>
            <input
              id="bf-from"
              name="from"
              required
              placeholder="2026-11-01"
              value={from}
              aria-invalid={errors.from ? true : undefined}
              aria-describedby={describedBy("from", false)}
              onInput={(e) => edit(setFrom)((e.currentTarget as HTMLInputElement).value)}
              autoFocus
            />
          </Field>
          <Field id="to" label="To (excluded)" error={errors.to}>
            <input
              id="bf-to"
              name="to"
              required
              placeholder="2026-11-08"
              value={to}
              aria-invalid={errors.to ? true : undefined}
              aria-describedby={describedBy("to", false)}
              onInput={(e) => edit(setTo)((e.currentTarget as HTMLInputElement).value)}
            />
          </Field>
          <Field id="parallel" label="Runs at once" error={errors.parallel}>
            <input
              id="bf-parallel"
              name="parallel"
              type="number"
              min={1}
              step={1}
              value={parallel}
              aria-invalid={errors.parallel ? true : undefined}
              aria-describedby={describedBy("parallel", false)}
              onInput={(e) => edit(setParallel)((e.currentTarget as HTMLInputElement).value)}
            />
          </Field>
        </div>
        {errors.job && <p class="field-error" role="alert">{errors.job}</p>}
        <label class="check">
          <input type="checkbox" name="rerun" checked={rerun} onChange={(e) => edit(setRerun)((e.currentTarget as HTMLInputElement).checked)} /> Also run
          the slots that already have a run (rerun)
        </label>
        <label class="check">
          <input
            type="checkbox"
            name="ignore_exclude"
            checked={ignoreExclude}
            onChange={(e) => edit(setIgnoreExclude)((e.currentTarget as HTMLInputElement).checked)}
          />{" "}
          Also run the slots <code>exclude</code> removes
        </label>
        <ParamFields decls={form.decls} inputs={form.inputs} errors={fieldErrors(action.error)} onChange={(name, value) => {
            form.set(name, value);
            setPreview(null);
          }}
        />
        <label class="field">
          Reason (optional)
          <textarea name="reason" rows={2} maxLength={MAX_REASON} value={reason} onInput={(e) => setReason((e.currentTarget as HTMLTextAreaElement).value)} />
        </label>
        {action.error && <ErrorBox error={action.error} title="The backfill was not started" />}
        {preview && <Preview plan={preview} />}
        <div class="dialog-actions">
          <button type="button" onClick={close}>
            Cancel
          </button>
          <button type="submit" value="preview" disabled={action.busy}>
            Preview slots
          </button>
          <button type="submit" value="start" class="primary" disabled={action.busy}>
            {action.busy ? "Working…" : "Start backfill"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function Preview({ plan }: { plan: DryRun }) {
  const shown = plan.slots.slice(0, PREVIEW_ROWS);
  return (
    <section class="backfill-preview" aria-live="polite" data-preview>
      <p>
        <strong data-preview-runs>{plan.runs}</strong> run{plan.runs === 1 ? "" : "s"} to create of {plan.slots.length} slot
        {plan.slots.length === 1 ? "" : "s"} ({plan.timezone}).
        {plan.after_now ? (
          <span data-preview-after-now>
            {" "}
            {plan.after_now >= 10_000 ? "10,000 or more" : plan.after_now} later slot{plan.after_now === 1 ? " is" : "s are"} still ahead: the scheduler runs
            {plan.after_now === 1 ? " it" : " them"} at {plan.after_now === 1 ? "its" : "their"} time.
          </span>
        ) : null}
      </p>
      {shown.length > 0 && (
        <table>
          <caption class="sr-only">Slots of the range</caption>
          <thead>
            <tr>
              <th scope="col">Slot (local)</th>
              <th scope="col">Runs?</th>
              <th scope="col">Note</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((s) => (
              <tr key={s.utc} data-slot={s.utc}>
                <td>
                  <time dateTime={s.utc} title={s.utc}>
                    {s.local}
                  </time>
                </td>
                <td>
                  {s.will_run ? (
                    "yes"
                  ) : s.excluded ? (
                    "no: excluded"
                  ) : s.existing_run !== null ? (
                    <>
                      no: has <a href={href(`/runs/${s.existing_run}`)}>run #{s.existing_run}</a>
                    </>
                  ) : (
                    "no"
                  )}
                </td>
                <td>{[s.note, s.excluded].filter((x) => x).join("; ")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {plan.slots.length > shown.length && <p class="hint">First {shown.length} of {plan.slots.length} slots.</p>}
    </section>
  );
}
