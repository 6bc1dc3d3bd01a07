import type { ComponentChildren } from "preact";
import type { ApiError } from "../lib/api.js";
import { openPrompt } from "../lib/auth.js";
import { IssueList } from "./IssueList.js";
import type { ConfigIssue } from "../lib/types.js";

export function Loading({ what = "Loading" }: { what?: string }) {
  return (
    <p class="state loading" role="status">
      <span class="spinner" aria-hidden="true" /> {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

function isIssueList(v: unknown): v is ConfigIssue[] {
  return Array.isArray(v) && v.every((x) => typeof x === "object" && x !== null && "message" in x);
}

/** An API error as the user should read it: status, code, message, and details when present. */
export function ErrorBox({ error, onRetry, title }: { error: ApiError; onRetry?: () => void; title?: string }) {
  const details = error.details;
  return (
    <div class="state error" role="alert">
      <p>
        <strong>{title ?? "Error"}</strong>
        {error.status > 0 && <span class="code"> {error.status}</span>} <span class="code">{error.code}</span>: {error.message}
      </p>
      {isIssueList(details) ? (
        <IssueList issues={details} />
      ) : details !== undefined && details !== null ? (
        <pre class="details">{typeof details === "string" ? details : JSON.stringify(details, null, 2)}</pre>
      ) : null}
      <p class="actions">
        {error.status === 401 && (
          <button type="button" onClick={openPrompt}>
            Sign in
          </button>
        )}
        {onRetry && (
          <button type="button" onClick={onRetry}>
            Try again
          </button>
        )}
      </p>
    </div>
  );
}

/** The usual trio for a loaded value: error first, then loading, then the content. */
export function Loaded<T>({
  state,
  children,
  what,
}: {
  state: { data: T | undefined; error: ApiError | undefined; reload: () => void };
  children: (data: T) => ComponentChildren;
  what?: string;
}) {
  if (state.error && state.data === undefined) return <ErrorBox error={state.error} onRetry={state.reload} />;
  if (state.data === undefined) return <Loading what={what} />;
  return (
    <>
      {state.error && <ErrorBox error={state.error} onRetry={state.reload} title="Refresh failed (showing the last data)" />}
      {children(state.data)}
    </>
  );
}
