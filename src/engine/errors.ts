import { SvcError } from "../shared/svcError.js";

/**
 * Typed errors of the engine's manual operations (a SvcError: the API answers
 * them with their code, not_found 404, conflict 409, bad_request 400,
 * validation_failed 422 with `details`; the CLI prints the message).
 */
export type EngineErrorCode = "not_found" | "conflict" | "bad_request" | "validation_failed";

export class EngineError extends SvcError {
  declare readonly code: EngineErrorCode;
  constructor(code: EngineErrorCode, message: string, details?: unknown) {
    super(code, message, { details });
    this.name = "EngineError";
  }
}

export const notFound = (what: string): EngineError => new EngineError("not_found", what);
export const conflict = (what: string): EngineError => new EngineError("conflict", what);
export const badRequest = (what: string): EngineError => new EngineError("bad_request", what);

/** Values a trigger passed that do not fit (CONTRACT §7.2): one entry per bad field, nothing created. */
export function validationFailed(job: string, issues: readonly { path: string; message: string }[]): EngineError {
  const list = issues.map((i) => `${i.path} ${i.message}`).join("; ");
  return new EngineError("validation_failed", `job ${job}: ${list}`, issues);
}

export function unknownJob(name: string): EngineError {
  return notFound(`unknown job "${name}": it is not in svc.yaml (see \`svc status\`)`);
}
