import { fileURLToPath } from "node:url";
import { dataDir, findConfig, findDaemonConfig } from "../config/index.js";
import { toError } from "../shared/toError.js";
import { Daemon, StartupError } from "./daemon.js";

export interface DaemonCommandOptions {
  config?: string;
  dataDir?: string;
  daemonConfig?: string;
}

/**
 * `svcd` / `svc daemon run`: the daemon in the foreground until SIGTERM,
 * SIGINT (twice: forced) or `POST /api/daemon/stop`. SIGHUP reloads.
 * Returns the process exit code; startup errors are printed one per line.
 */
export async function runDaemonCommand(opts: DaemonCommandOptions): Promise<number> {
  let daemon: Daemon;
  try {
    const config = findConfig({ flag: opts.config, env: process.env, cwd: process.cwd() });
    daemon = new Daemon({
      config,
      dataDir: dataDir({ configFile: config, flag: opts.dataDir, env: process.env }),
      daemonConfig: findDaemonConfig(config, opts.daemonConfig),
      webRoot: fileURLToPath(new URL("../web", import.meta.url)),
    });
    await daemon.start();
  } catch (e) {
    const lines = e instanceof StartupError ? e.lines : [toError(e).message];
    for (const line of lines) process.stderr.write(`svcd: ${line}\n`);
    return 1;
  }

  let interrupts = 0;
  const onStop = (signal: NodeJS.Signals) => {
    interrupts++;
    const force = interrupts > 1;
    daemon.logger.info({ signal }, force ? "second signal: forced stop" : "signal received: stopping");
    void daemon.stop({ force });
  };
  const onHup = () => {
    daemon.logger.info({ signal: "SIGHUP" }, "reloading config");
    void daemon.reload();
  };
  process.on("SIGTERM", onStop);
  process.on("SIGINT", onStop);
  process.on("SIGHUP", onHup);
  // The daemon never dies of a stray error in a callback: it is logged with context.
  const onCrash = (e: unknown) => daemon.logger.error({ err: toError(e) }, "unexpected error (the daemon keeps running)");
  process.on("uncaughtException", onCrash);
  process.on("unhandledRejection", onCrash);

  await daemon.done;
  process.off("SIGTERM", onStop);
  process.off("SIGINT", onStop);
  process.off("SIGHUP", onHup);
  return 0;
}
