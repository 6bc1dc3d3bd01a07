import { useEffect, useState } from "preact/hooks";
import { api, ApiError, seg } from "../lib/api.js";
import { initialInputs, paramsBody, type ParamDecl, type ParamInputs } from "../lib/paramForm.js";

export type { ParamDecl, ParamInputs } from "../lib/paramForm.js";

/**
 * The job's param declarations (GET /api/jobs/:name) and the form's inputs, reset when the job
 * changes; null job: none. `from`: values to start with instead of the defaults (a run's
 * params, for "Run again"); a secret one arrives as *** and is left empty.
 */
export function useParamForm(job: string | null, from?: Record<string, string | number | boolean | null>) {
  const fromKey = from ? JSON.stringify(from) : "";
  const [decls, setDecls] = useState<Record<string, ParamDecl>>({});
  const [inputs, setInputs] = useState<ParamInputs>({});
  // Until the declarations are read, a run would be sent without params: with `from` ("Run again") that
  // silently starts one with the defaults instead of the run's values. `ready` says they were read.
  const [ready, setReady] = useState(false);
  const [loadError, setLoadError] = useState<ApiError | null>(null);
  useEffect(() => {
    setDecls({});
    setInputs({});
    setReady(false);
    setLoadError(null);
    if (job === null) return;
    let live = true;
    void api.get<{ job: { params?: Record<string, ParamDecl> } }>(`api/jobs/${seg(job)}`, { runs: 0 }).then(
      (r) => {
        if (!live) return;
        const p = r.job.params ?? {};
        setDecls(p);
        setInputs(initialInputs(p, from));
        setReady(true);
      },
      (e: unknown) => live && setLoadError(e instanceof ApiError ? e : new ApiError(0, "client", String(e))),
    );
    return () => {
      live = false;
    };
  }, [job, fromKey]);
  return {
    decls,
    inputs,
    ready,
    loadError,
    has: Object.keys(decls).length > 0,
    set: (name: string, value: string | boolean) => setInputs((now) => ({ ...now, [name]: value })),
    body: () => paramsBody(decls, inputs),
  };
}

/** The daemon's message for each path of a 422 validation_failed (`from`, `params.day`...). */
export function pathErrors(error: ApiError | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!error || error.code !== "validation_failed" || !Array.isArray(error.details)) return out;
  for (const d of error.details as { path?: string; message?: string }[]) {
    if (typeof d.path === "string") out[d.path] = out[d.path] ? `${out[d.path]}; ${d.message ?? "is invalid"}` : (d.message ?? "is invalid");
  }
  return out;
}

/** The daemon's message for each `params.NAME` of a 422 validation_failed, by NAME. */
export function fieldErrors(error: ApiError | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [path, message] of Object.entries(pathErrors(error))) if (path.startsWith("params.")) out[path.slice("params.".length)] = message;
  return out;
}

/** One input per declared param: typed, enum as a select, required marked, the server's message beside it. */
export function ParamFields({
  decls,
  inputs,
  errors,
  onChange,
}: {
  decls: Record<string, ParamDecl>;
  inputs: ParamInputs;
  errors: Record<string, string>;
  onChange: (name: string, value: string | boolean) => void;
}) {
  const names = Object.keys(decls);
  if (names.length === 0) return null;
  return (
    <fieldset class="params">
      <legend>Parameters</legend>
      {names.map((name) => {
        const d = decls[name]!;
        const id = `param-${name}`;
        const err = errors[name];
        const describedBy = [d.description ? `${id}-hint` : "", err ? `${id}-error` : ""].filter((x) => x).join(" ") || undefined;
        const common = { id, name, "aria-invalid": err ? true : undefined, "aria-describedby": describedBy, "aria-required": d.required || undefined };
        const value = inputs[name];
        let input;
        if (d.type === "boolean") {
          input = <input type="checkbox" {...common} checked={value === true} onChange={(e) => onChange(name, (e.currentTarget as HTMLInputElement).checked)} />;
        } else if (d.type === "enum") {
          input = (
            <select {...common} value={String(value ?? "")} onChange={(e) => onChange(name, (e.currentTarget as HTMLSelectElement).value)}>
              {/* Without a default the param is required: nothing chosen yet. With one, it is selected. */}
              {d.default === null && <option value="">choose…</option>}
              {(d.values ?? []).map((v) => (
                <option value={v}>{v}</option>
              ))}
            </select>
          );
        } else {
          const type = d.secret ? "password" : d.type === "integer" || d.type === "number" ? "number" : "text";
          input = (
            <input
              type={type}
              step={d.type === "integer" ? "1" : d.type === "number" ? "any" : undefined}
              {...common}
              value={String(value ?? "")}
              placeholder={d.secret && d.default !== null ? "(secret default)" : d.pattern ? `matches ${d.pattern}` : undefined}
              onInput={(e) => onChange(name, (e.currentTarget as HTMLInputElement).value)}
            />
          );
        }
        return (
          <div class={`field param${err ? " invalid" : ""}`} data-param={name}>
            <label for={id}>
              {name}
              {d.required && (
                <span class="required" title="required">
                  {" *"}
                </span>
              )}{" "}
              <span class="hint">({d.type})</span>
            </label>
            {input}
            {d.description && (
              <p class="hint" id={`${id}-hint`}>
                {d.description}
              </p>
            )}
            {err && (
              <p class="field-error" id={`${id}-error`} role="alert">
                {err}
              </p>
            )}
          </div>
        );
      })}
    </fieldset>
  );
}
