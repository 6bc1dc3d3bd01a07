import { createStore } from "./store.js";

/**
 * Bearer token handling (CONTRACT §5). The token lives in sessionStorage, so
 * it is gone when the tab closes. Any request answered 401 parks here until
 * the user types a token into the prompt, then retries; all parked requests
 * share the one prompt.
 */
const KEY = "svc.token";

export interface PromptState {
  open: boolean;
  /** True when a token was sent and refused (as opposed to none sent yet). */
  rejected: boolean;
  /** The user closed the prompt: further 401s fail at once instead of re-prompting every poll. */
  dismissed: boolean;
}

export const promptStore = createStore<PromptState>({ open: false, rejected: false, dismissed: false });

/** Bumped on every sign-in, so views that failed with 401 load again. */
export const signInEpoch = createStore(0);

let waiters: { resolve: () => void; reject: (e: Error) => void }[] = [];

export function getToken(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null; // storage disabled: behave as logged out
  }
}

function storeToken(token: string | null): void {
  try {
    if (token) sessionStorage.setItem(KEY, token);
    else sessionStorage.removeItem(KEY);
  } catch {
    // storage disabled: the token lasts until the next 401
  }
}

/** Called by the API client on 401: resolves once a new token is entered. */
export function waitForToken(rejected: boolean): Promise<void> {
  const state = promptStore.get();
  if (state.dismissed) return Promise.reject(new Error("not signed in"));
  if (!state.open || (rejected && !state.rejected)) promptStore.set({ open: true, rejected, dismissed: false });
  return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
}

/** "Sign in" button: open the prompt even though nothing is waiting. */
export function openPrompt(): void {
  promptStore.set({ open: true, rejected: false, dismissed: false });
}

export function submitToken(token: string): void {
  storeToken(token.trim());
  promptStore.set({ open: false, rejected: false, dismissed: false });
  signInEpoch.set(signInEpoch.get() + 1);
  const pending = waiters;
  waiters = [];
  for (const w of pending) w.resolve();
}

/** The user closed the prompt: parked requests fail with their 401. */
export function dismissPrompt(): void {
  promptStore.set({ open: false, rejected: promptStore.get().rejected, dismissed: true });
  const pending = waiters;
  waiters = [];
  for (const w of pending) w.reject(new Error("sign-in cancelled"));
}

export function signOut(): void {
  storeToken(null);
}
