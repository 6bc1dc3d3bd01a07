import type { Command } from "commander";
import type { Output } from "./output.js";

/** The global options every command sees (CONTRACT §1). */
export interface GlobalOptions {
  config?: string;
  dataDir?: string;
  daemonConfig?: string;
}

/** What a command group needs from its surroundings; one object, passed to every register(). */
export interface CliContext {
  output: Output;
  env: NodeJS.ProcessEnv;
  cwd: string;
  version: string;
}

/** A command group: one file under src/cli/commands/, adding its commands to the program. */
export type RegisterCommands = (program: Command, ctx: CliContext) => void;

/** The global options as seen from inside a (sub)command's action. */
export function globalsOf(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}
