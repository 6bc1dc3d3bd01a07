/**
 * The client side of `svc`: how commands find and talk to the daemon
 * (target.ts, http.ts, logSocket.ts) and show what it says (present.ts).
 */
import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { DaemonClient, timeoutFromEnv } from "./http.js";
import { resolveTarget, type ClientGlobals } from "./target.js";

export { DaemonClient } from "./http.js";
export { ApiError } from "./errors.js";
export type { Target } from "./target.js";

/** The global `--addr` option (GROUPS entry in main.ts). */
export function registerClientOptions(program: Command, _ctx: CliContext): void {
  program.option("--addr <url>", "talk to the daemon at this address over HTTP(S) (default: $SVC_ADDR, else the Unix socket in the data directory)");
}

/** A client for the daemon of this project (CONTRACT §1 transport rules). */
export function clientFor(cmd: Command, ctx: CliContext): DaemonClient {
  return new DaemonClient(resolveTarget(ctx, clientGlobals(cmd)), timeoutFromEnv(ctx.env));
}

export function clientGlobals(cmd: Command): ClientGlobals {
  return cmd.optsWithGlobals<ClientGlobals>();
}
