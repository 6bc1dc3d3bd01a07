/**
 * The client side of `svc`: how commands find and talk to the daemon
 * (target.ts, http.ts, logSocket.ts) and show what it says (present.ts).
 */
import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { DaemonClient, timeoutFromEnv } from "./http.js";
import { describeTarget, resolveTarget, type ClientGlobals } from "./target.js";

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
    // api.addr holds host:port only: the scheme (api.tls.enabled) and api.base_path come from svcd.yaml.
    const d = await daemonAddressing(ctx, target.projectFile, globals.daemonConfig);
    if (d.tls && target.url.protocol === "http:") target.url.protocol = "https:";
    if (d.basePath !== "") target.url.pathname = `${d.basePath}/`;
  }
  const trace = ctx.verbose ? (line: string) => ctx.output.err(`svc: ${line}\n`) : undefined;
  trace?.(`daemon: ${describeTarget(target)} (${target.kind === "unix" ? "Unix socket" : target.source}${target.projectFile ? `, project ${target.projectFile}` : ""})`);
  return new DaemonClient(target, timeoutFromEnv(ctx.env), trace);
}

/** `api.base_path` and `api.tls.enabled` of svcd.yaml ("" and false without one, or when it does not load). */
export async function daemonAddressing(ctx: CliContext, projectFile: string, daemonConfigFlag: string | undefined): Promise<{ basePath: string; tls: boolean }> {
  const { findDaemonConfig, loadDaemonConfig } = await import("../../config/index.js");
  const file = findDaemonConfig(projectFile, daemonConfigFlag, ctx.cwd);
  if (file === null) return { basePath: "", tls: false };
  const cfg = loadDaemonConfig(file, ctx.env);
  return cfg.ok ? { basePath: cfg.value.api.basePath, tls: cfg.value.api.tls.enabled } : { basePath: "", tls: false };
}

export function clientGlobals(cmd: Command): ClientGlobals {
  return cmd.optsWithGlobals<ClientGlobals>();
}
