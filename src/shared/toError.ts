/**
 * Every `catch (e: unknown)` goes through here so that a thrown non-Error
 * (a string, an object) still becomes an Error with a message, and the
 * original is kept as `cause`.
 */
export function toError(e: unknown): Error {
  if (e instanceof Error) return e;
  let text: string;
  try {
    text = typeof e === "string" ? e : JSON.stringify(e);
  } catch {
    text = String(e);
  }
  return new Error(text ?? String(e), { cause: e });
}

/** The message of anything thrown, for one-line user-facing errors. */
export function errorMessage(e: unknown): string {
  return toError(e).message;
}
