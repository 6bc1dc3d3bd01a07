/**
 * Typed errors of the engine's manual operations. The API maps `code` to an
 * HTTP status (not_found 404, conflict 409, bad_request 400); the CLI prints
 * the message.
 */
export type EngineErrorCode = "not_found" | "conflict" | "bad_request";

export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "EngineError";
  }
}

export const notFound = (what: string): EngineError => new EngineError("not_found", what);
export const conflict = (what: string): EngineError => new EngineError("conflict", what);
export const badRequest = (what: string): EngineError => new EngineError("bad_request", what);

export function unknownJob(name: string): EngineError {
  return notFound(`unknown job "${name}": it is not in svc.yaml (see \`svc status\`)`);
}
