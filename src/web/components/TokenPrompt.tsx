import { useState } from "preact/hooks";
import { Dialog } from "./Dialog.js";
import { dismissPrompt, promptStore, submitToken } from "../lib/auth.js";
import { useStore } from "../lib/store.js";

/** Shown when the API answers 401 (auth.type: bearer). The token stays in this tab's sessionStorage. */
export function TokenPrompt() {
  const state = useStore(promptStore);
  const [token, setToken] = useState("");
  return (
    <Dialog open={state.open} title="Sign in to svc" onClose={dismissPrompt} labelledBy="token-title">
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (token.trim()) {
            submitToken(token);
            setToken("");
          }
        }}
      >
        <p>
          This daemon requires a bearer token. It is kept for this browser tab only (sessionStorage) and sent as{" "}
          <code>Authorization: Bearer</code>.
        </p>
        {state.rejected && (
          <p class="form-error" role="alert">
            The daemon refused the token (401). Check it and try again.
          </p>
        )}
        <label class="field">
          Access token
          <input
            type="password"
            name="token"
            autoComplete="current-password"
            value={token}
            onInput={(e) => setToken((e.currentTarget as HTMLInputElement).value)}
            required
            autoFocus
          />
        </label>
        <div class="dialog-actions">
          <button type="button" onClick={dismissPrompt}>
            Cancel
          </button>
          <button type="submit" class="primary">
            Sign in
          </button>
        </div>
      </form>
    </Dialog>
  );
}
