// First: the heap sizing must apply before the daemon's modules allocate.
import "./heap.js";
import { fileURLToPath } from "node:url";
import { dataDir, findConfig, findDaemonConfig } from "../config/index.js";
import { toError } from "../shared/toError.js";
import { Daemon, StartupError, type DaemonPaths } from "./daemon.js";
import { dropLauncherEnv } from "./launcher.js";

export interface DaemonCommandOptions {
  config?: string;
  dataDir?: string;
  daemonConfig?: string;
}

/**
 * `svcd` / `svc daemon run`: the daemon in the foreground until SIGTERM,
 * SIGINT (twice: forced) or `POST /api/daemon/stop`. SIGHUP reloads.
 * Returns the process exit code; startup errors are printed one per line.
 *
 * Signal handlers are installed before startup begins, so a signal that
 * arrives while the daemon starts is never fatal: a stop request is carried
 * out once startup is done, and a SIGHUP then is ignored (the config was
 * just read).
 */
export async function runDaemonCommand(opts: DaemonCommandOptions): Promise<number> {
  // Before anything reads the environment: jobs inherit it, and what a launcher added is svcd's own.
  dropLauncherEnv();
  let daemon: Daemon | null = null;
  let started = false;
  let interrupts = 0;
  const onStop = (signal: NodeJS.Signals) => {
    interrupts++;
    if (!started || !daemon) return; // carried out after startup, below
    const force = interrupts > 1;
    daemon.logger.info({ signal }, force ? "second signal: forced stop" : "signal received: stopping");
    void daemon.stop({ force });
  };
  const onHup = () => {
    if (!started || !daemon) return;
    daemon.logger.info({ signal: "SIGHUP" }, "reloading config");
    void daemon.reload();
  };
  // The daemon never dies of a stray error in a callback: it is logged with context.
  const onCrash = (e: unknown) => {
    if (daemon && started) daemon.logger.error({ err: toError(e) }, "unexpected error (the daemon keeps running)");
    else process.stderr.write(`svcd: unexpected error: ${toError(e).message}\n`);
  };
  process.on("SIGTERM", onStop);
  process.on("SIGINT", onStop);
  process.on("SIGHUP", onHup);
  process.on("uncaughtException", onCrash);
  process.on("unhandledRejection", onCrash);
  const detach = () => {
    process.off("SIGTERM", onStop);
    process.off("SIGINT", onStop);
    process.off("SIGHUP", onHup);
  };

  const fail = (e: unknown): number => {
    detach();
    const lines = e instanceof StartupError ? e.lines : [toError(e).message];
    for (const line of lines) process.stderr.write(`svcd: ${line}\n`);
    return 1;
  };
  let paths: DaemonPaths;
  try {
    const config = findConfig({ flag: opts.config, env: process.env, cwd: process.cwd() });
    paths = {
      config,
      dataDir: dataDir({ configFile: config, flag: opts.dataDir, env: process.env }),
      daemonConfig: findDaemonConfig(config, opts.daemonConfig),
      webRoot: fileURLToPath(new URL("../web", import.meta.url)),
    };
  } catch (e) {
    return fail(e);
  }
  // Runs until stopped. When the data directory was removed under it, the
  // daemon wrote the database back and asked to start again from it.
  for (let round = 0; ; round++) {
    started = false;
    try {
      daemon = new Daemon(paths);
      await daemon.start();
      started = true;
    } catch (e) {
      return fail(e);
    }
    if (round > 0) daemon.logger.info("started again after the data directory was put back");
    if (interrupts > 0) {
      daemon.logger.info("a stop signal arrived during startup: stopping");
      void daemon.stop({ force: interrupts > 1 });
    }
    await daemon.done;
    if (!daemon.restartRequested || interrupts > 0) break;
  }
  detach();
  return 0;
}
