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
export async function clientFor(cmd: Command, ctx: CliContext): Promise<DaemonClient> {
  const globals = clientGlobals(cmd);
  const target = resolveTarget(ctx, globals);
  if (target.kind === "http" && target.source === "api.addr" && target.projectFile !== null) {
    // api.addr holds host:port only; the API sits under api.base_path when svcd.yaml sets one.
    const base = await basePath(ctx, target.projectFile, globals.daemonConfig);
    if (base !== "") target.url.pathname = `${base}/`;
  }
  return new DaemonClient(target, timeoutFromEnv(ctx.env));
}

/** `api.base_path` of svcd.yaml ("" without one, or when it does not load). */
export async function basePath(ctx: CliContext, projectFile: string, daemonConfigFlag: string | undefined): Promise<string> {
  const { findDaemonConfig, loadDaemonConfig } = await import("../../config/index.js");
  const file = findDaemonConfig(projectFile, daemonConfigFlag, ctx.cwd);
  if (file === null) return "";
  const cfg = loadDaemonConfig(file, ctx.env);
  return cfg.ok ? cfg.value.api.basePath : "";
}

export function clientGlobals(cmd: Command): ClientGlobals {
  return cmd.optsWithGlobals<ClientGlobals>();
}
