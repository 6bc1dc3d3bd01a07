import type { Command } from "commander";
import type { Output } from "./output.js";

/** The global options every command sees (CONTRACT §1). */
export interface GlobalOptions {
  config?: string;
  dataDir?: string;
  daemonConfig?: string;
  quiet?: boolean;
  verbose?: boolean;
}

/** What a command group needs from its surroundings; one object, passed to every register(). */
export interface CliContext {
  output: Output;
  env: NodeJS.ProcessEnv;
  cwd: string;
  version: string;
  /** `-q`: only data and errors (no confirmations, progress or notes). Set from the parsed options. */
  quiet?: boolean;
  /** `-v`: say which daemon is used and each request with its status and time; stack traces of bugs. */
  verbose?: boolean;
}

/** A command group: one file under src/cli/commands/, adding its commands to the program. */
export type RegisterCommands = (program: Command, ctx: CliContext) => void;

/** The global options as seen from inside a (sub)command's action. */
export function globalsOf(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}
