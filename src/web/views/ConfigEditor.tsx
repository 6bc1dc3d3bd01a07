import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, type ApiError } from "../lib/api.js";
import { useApi, toApiError } from "../lib/useApi.js";
import { askBeforeLeaving } from "../lib/router.js";
import type { ConfigIssue, ValidateResponse } from "../lib/types.js";
import { notify } from "../lib/notices.js";
import { plural } from "../lib/format.js";
import { issueText } from "../components/IssueList.js";
import { Badge } from "../components/StatusBadge.js";
import { ErrorBox, Loaded } from "../components/States.js";

const DEBOUNCE_MS = 400;
const FILE = "svc.yaml";

interface Source {
  path: string;
  content: string;
}

type Check = { state: "idle" | "checking" } | { state: "done"; result: ValidateResponse } | { state: "failed"; error: ApiError };

/** Validate-as-you-type: the latest text is checked DEBOUNCE_MS after the last keystroke; stale answers are dropped. */
function useValidation(text: string): Check {
  const [check, setCheck] = useState<Check>({ state: "idle" });
  const latest = useRef(0);
  useEffect(() => {
    const id = ++latest.current;
    const timer = setTimeout(() => {
      setCheck({ state: "checking" });
      api.post<ValidateResponse>("api/config/validate", { file: FILE, content: text }).then(
        (result) => id === latest.current && setCheck({ state: "done", result }),
        (e: unknown) => id === latest.current && setCheck({ state: "failed", error: toApiError(e) }),
      );
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [text]);
  return check;
}

/** Issues by line of the file being edited (`file`): another file's (svcd.yaml's, at a reload) have their own lines. */
function byLine(issues: { issue: ConfigIssue; kind: "error" | "warning" }[], file: string) {
  const m = new Map<number, { issue: ConfigIssue; kind: "error" | "warning" }[]>();
  for (const x of issues) {
    if (!x.issue.line || (x.issue.file && x.issue.file !== file)) continue;
    m.set(x.issue.line, [...(m.get(x.issue.line) ?? []), x]);
  }
  return m;
}

function Editor({ source, onSaved }: { source: Source; onSaved: () => void }) {
  const [text, setText] = useState(source.content);
  const [saveErrors, setSaveErrors] = useState<ConfigIssue[] | null>(null);
  const [saveError, setSaveError] = useState<ApiError | null>(null);
  const [saving, setSaving] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const check = useValidation(text);
  const dirty = text !== source.content;
  // Edits not saved yet: the browser asks before the tab is closed or reloaded, and the dashboard
  // before it shows another view (a link, the back button).
  useEffect(() => {
    if (!dirty) return;
    const guard = (e: BeforeUnloadEvent) => e.preventDefault();
    addEventListener("beforeunload", guard);
    askBeforeLeaving("svc.yaml has unsaved changes. Leave this page and lose them?");
    return () => {
      removeEventListener("beforeunload", guard);
      askBeforeLeaving(null);
    };
  }, [dirty]);

  const issues = useMemo(() => {
    if (saveErrors) return saveErrors.map((issue) => ({ issue, kind: "error" as const }));
    if (check.state !== "done") return [];
    return [
      ...check.result.errors.map((issue) => ({ issue, kind: "error" as const })),
      ...check.result.warnings.map((issue) => ({ issue, kind: "warning" as const })),
    ];
  }, [check, saveErrors]);
  const marks = useMemo(() => byLine(issues, source.path), [issues, source.path]);
  const lineCount = text.split("\n").length;

  const goToLine = (line: number) => {
    const el = area.current;
    if (!el) return;
    const lines = text.split("\n");
    const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0);
    el.focus();
    el.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
    const lh = parseFloat(getComputedStyle(el).lineHeight) || 18;
    el.scrollTop = Math.max(0, (line - 3) * lh);
  };

  const save = async () => {
    setSaving(true);
    setSaveError(null);
    try {
      await api.post("api/config/save", { file: FILE, content: text });
      setSaveErrors(null);
      notify("ok", "svc.yaml saved and reloaded");
      onSaved();
    } catch (e) {
      const err = toApiError(e);
      // A 422 after the file was written ("svc.yaml was saved (previous copy: ...), but ..."): the reload was
      // rejected (svcd.yaml broken, a schedule that cannot be stored). The text is on disk, the daemon keeps its
      // previous config: the editor takes the saved text, and the reason stays up as a notice.
      if (err.status === 422 && /^svc\.yaml was saved\b/.test(err.message)) {
        notify("error", `Saved, but not reloaded: the daemon keeps its previous config. ${err.message}`);
        onSaved();
        return;
      }
      if (err.status === 422 && Array.isArray(err.details)) setSaveErrors(err.details as ConfigIssue[]);
      setSaveError(err);
    } finally {
      setSaving(false);
    }
  };

  const errors = issues.filter((i) => i.kind === "error").length;
  const warnings = issues.length - errors;
  return (
    <div>
      <div class="editor-bar">
        <code>{source.path}</code>
        {dirty ? <Badge tone="warn">unsaved changes</Badge> : <Badge tone="muted">saved</Badge>}
        <span aria-live="polite" data-testid="validation">
          {check.state === "checking" ? (
            <Badge tone="wait">checking</Badge>
          ) : check.state === "failed" ? (
            <Badge tone="bad">validation unavailable: {check.error.message}</Badge>
          ) : issues.length > 0 ? (
            <Badge tone={errors ? "bad" : "warn"}>
              {plural(errors, "error")}, {plural(warnings, "warning")}
            </Badge>
          ) : check.state === "done" ? (
            <Badge tone="ok">valid</Badge>
          ) : null}
        </span>
        <div class="head-actions">
          <button type="button" disabled={!dirty || saving} onClick={() => { setText(source.content); setSaveErrors(null); setSaveError(null); }}>
            Revert
          </button>
          <button type="button" class="primary" disabled={!dirty || saving} onClick={() => void save()}>
            {saving ? "Saving…" : "Save and reload"}
          </button>
        </div>
      </div>
      {saveError && <ErrorBox error={saveError} title={saveError.status === 422 ? "Not saved: the config is invalid (422)" : "Not saved"} />}
      <div class="editor">
        <div class="gutter" ref={gutter} aria-hidden="true">
          {Array.from({ length: lineCount }, (_, i) => {
            const m = marks.get(i + 1);
            const kind = m?.some((x) => x.kind === "error") ? "error" : m ? "warning" : "";
            return (
              <div key={i} class={`gl${kind ? ` gl-${kind}` : ""}`} title={m?.map((x) => x.issue.message).join("\n")}>
                {kind && <span class="gl-mark">{kind === "error" ? "✕" : "!"}</span>}
                {i + 1}
              </div>
            );
          })}
        </div>
        <textarea
          ref={area}
          class="code"
          aria-label="svc.yaml"
          aria-describedby="editor-issues"
          spellcheck={false}
          wrap="off"
          value={text}
          onInput={(e) => {
            setText((e.currentTarget as HTMLTextAreaElement).value);
            setSaveErrors(null);
          }}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = (e.currentTarget as HTMLTextAreaElement).scrollTop;
          }}
        />
      </div>
      <ul id="editor-issues" class="issues">
        {issues.map(({ issue, kind }, n) => (
          <li key={n} class={`issue-${kind}`}>
            <span class="issue-kind">{kind}</span>{" "}
            {issue.line ? (
              <button type="button" class="link" onClick={() => goToLine(issue.line)}>
                {issueText(issue)}
              </button>
            ) : (
              issueText(issue)
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * svc.yaml read-only, as every role may read it: secrets `***`. There is
 * nothing to save: the text is not the file (CONTRACT §7.5).
 */
function ReadOnly({ source, why }: { source: Source; why: ApiError }) {
  return (
    <div>
      <div class="editor-bar">
        <code>{source.path}</code>
        <Badge tone="muted">read-only</Badge>
      </div>
      <p class="hint" data-testid="read-only-reason">
        Your role may not change the configuration ({why.message}), so svc.yaml is shown with its secrets as ***.
      </p>
      <pre class="code-view" tabIndex={0} aria-label="svc.yaml (read-only)">
        {source.content}
      </pre>
    </div>
  );
}

/**
 * The svc.yaml editor. It edits the text as it is on disk
 * (`GET /api/config/source?raw=1`, allowed to the roles that may save it):
 * the redacted text would save `***` over every secret. Other roles get that
 * redacted text read-only.
 */
export function ConfigEditor({ onSaved: saved }: { onSaved?: () => void } = {}) {
  const source = useApi<Source>("api/config/source?raw=1");
  const forbidden = source.error?.status === 403;
  const redacted = useApi<Source>(forbidden ? "api/config/source" : null);
  const [version, setVersion] = useState(0);
  if (source.error?.status === 404) {
    return (
      <ErrorBox
        error={source.error}
        title="The daemon does not serve the raw svc.yaml (GET /api/config/source), so it cannot be edited here"
      />
    );
  }
  if (forbidden) {
    return (
      <Loaded state={redacted} what="Loading svc.yaml">
        {(s) => <ReadOnly source={s} why={source.error!} />}
      </Loaded>
    );
  }
  return (
    <Loaded state={source} what="Loading svc.yaml">
      {(s) => (
        <Editor
          key={`${version}:${s.content}`}
          source={s}
          onSaved={() => {
            setVersion((v) => v + 1);
            void source.reload();
            saved?.();
          }}
        />
      )}
    </Loaded>
  );
}
