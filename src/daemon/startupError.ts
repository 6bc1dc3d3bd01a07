import { SvcError } from "../shared/svcError.js";

/** A startup failure: `lines` are printed to stderr one per line, exit code 1. */
export class StartupError extends SvcError {
  constructor(readonly lines: string[]) {
    super("internal", lines.join("\n"));
    this.name = "StartupError";
  }
}
