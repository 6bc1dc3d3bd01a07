/**
 * Hidden `svc daemon run` (= `svcd`): the daemon in the foreground. Its
 * options are also accepted after `daemon run`, so `svcd -c x.yaml` works.
 */
import type { Command } from "commander";
import { globalsOf, type CliContext } from "../context.js";
import { CliError } from "../output.js";

export function register(program: Command, _ctx: CliContext): void {
  const daemon = program.command("daemon", { hidden: true }).description("run the daemon (svcd)");
  daemon
    .command("run")
    .description("run the daemon in the foreground (the same as svcd)")
    .option("-c, --config <path>", "svc.yaml to use")
    .option("--data-dir <path>", "data directory")
    .option("--daemon-config <path>", "svcd.yaml to use")
    .action(async (opts: { config?: string; dataDir?: string; daemonConfig?: string }, cmd: Command) => {
      const globals = globalsOf(cmd);
      // Loaded here, not at the top: the daemon (fastify, SQLite, pino) would
      // add ~300 ms to every client command (svc status on 1,000 jobs: < 300 ms).
      const { runDaemonCommand } = await import("../../daemon/main.js");
      const code = await runDaemonCommand({
        config: opts.config ?? globals.config,
        dataDir: opts.dataDir ?? globals.dataDir,
        daemonConfig: opts.daemonConfig ?? globals.daemonConfig,
      });
      // the daemon printed its own errors
      if (code !== 0) throw new CliError("", code);
    });
}
