import { SvcError } from "../shared/svcError.js";

/**
 * Typed errors of the engine's manual operations (a SvcError: the API answers
 * them with their code, not_found 404, conflict 409, bad_request 400; the CLI
 * prints the message).
 */
export type EngineErrorCode = "not_found" | "conflict" | "bad_request";

export class EngineError extends SvcError {
  declare readonly code: EngineErrorCode;
  constructor(code: EngineErrorCode, message: string) {
    super(code, message);
    this.name = "EngineError";
  }
}

export const notFound = (what: string): EngineError => new EngineError("not_found", what);
export const conflict = (what: string): EngineError => new EngineError("conflict", what);
export const badRequest = (what: string): EngineError => new EngineError("bad_request", what);

export function unknownJob(name: string): EngineError {
  return notFound(`unknown job "${name}": it is not in svc.yaml (see \`svc status\`)`);
}
