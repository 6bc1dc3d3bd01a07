/**
 * Entry point of `svc` (bin/svc.js) and `svcd` (bin/svcd.js, which calls
 * main(["daemon", "run", ...args])). Builds the commander program from one
 * register() per command group, runs it, and turns every failure into one
 * line on stderr and an exit code (CONTRACT §1): 0 ok, 1 failure, 2 usage.
 */
import { Command, CommanderError } from "commander";
import { readFileSync } from "node:fs";
import { errorMessage } from "../shared/toError.js";
import type { CliContext, RegisterCommands } from "./context.js";
import { register as registerConfig } from "./commands/config.js";
import { register as registerDaemon } from "./commands/daemon.js";
import { register as registerDag } from "./commands/dag.js";
import { register as registerNext } from "./commands/next.js";
import { register as registerImport } from "./commands/import.js";
import { register as registerValidate } from "./commands/validate.js";
import { registerClientOptions } from "./client/index.js";
import { register as registerAlerts } from "./commands/alerts.js";
import { register as registerAudit } from "./commands/audit.js";
import { register as registerBackfill } from "./commands/backfill.js";
import { register as registerBackup } from "./commands/backup.js";
import { register as registerCompletion } from "./commands/completion.js";
import { register as registerDash } from "./commands/dash.js";
import { register as registerExport } from "./commands/export.js";
import { register as registerHistory } from "./commands/history.js";
import { register as registerIntegrations } from "./commands/integrations.js";
import { register as registerJobs } from "./commands/jobs.js";
import { register as registerLifecycle } from "./commands/lifecycle.js";
import { register as registerLogs } from "./commands/logs.js";
import { register as registerService } from "./commands/service.js";
import { register as registerShow } from "./commands/show.js";
import { register as registerStatus } from "./commands/status.js";
import { register as registerTags } from "./commands/tags.js";
import { register as registerWhy } from "./commands/why.js";
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, oneLine, processOutput, type Output } from "./output.js";

/**
 * Command groups, in help order. Offline commands read the files themselves.
 *
 * Daemon-client commands (start, stop, status, run, retry, cancel, skip,
 * pause, resume, reload, logs, history, export, tags, audit, integrations,
 * dash) and the hidden `daemon run` are added here by their owners: one file
 * per group under src/cli/commands/ exporting `register(program, ctx)`, and
 * one entry in this list.
 */
const GROUPS: RegisterCommands[] = [
  registerClientOptions,
  registerLifecycle,
  registerStatus,
  registerShow,
  registerWhy,
  registerJobs,
  registerLogs,
  registerHistory,
  registerAudit,
  registerBackfill,
  registerAlerts,
  registerExport,
  registerBackup,
  registerService,
  registerTags,
  registerIntegrations,
  registerDash,
  registerValidate,
  registerConfig,
  registerDag,
  registerNext,
  registerImport,
  registerCompletion,
  registerDaemon,
];

export interface MainOptions {
  output?: Output;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Runs `svc` with `argv` (without node and script); sets process.exitCode, never throws. */
export async function main(argv: string[], opts: MainOptions = {}): Promise<number> {
  if (opts.output === undefined) quietOnClosedPipe();
  const ctx: CliContext = {
    output: opts.output ?? processOutput,
    env: opts.env ?? process.env,
    cwd: opts.cwd ?? process.cwd(),
    version: packageVersion(),
  };
  const code = await run(argv, ctx);
  process.exitCode = code;
  return code;
}

async function run(argv: string[], ctx: CliContext): Promise<number> {
  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv, { from: "user" });
    return EXIT_OK;
  } catch (e) {
    return report(e, ctx);
  }
}

export function buildProgram(ctx: CliContext): Command {
  const program = new Command("svc");
  program
    .description("svc: a local-first job scheduler (cron with dependencies, retries, healthchecks and a dashboard)")
    .version(ctx.version, "-V, --version", "print the version")
    .option("-c, --config <path>", "svc.yaml to use (default: $SVC_CONFIG, else the first svc.yaml here or in a parent)")
    .option("--data-dir <path>", "data directory (default: $SVC_DATA_DIR, else .svc beside svc.yaml)")
    .option("--daemon-config <path>", "svcd.yaml to use (default: svcd.yaml beside svc.yaml)")
    .option("-q, --quiet", "print only data and errors: no confirmations, progress or notes")
    .option("-v, --verbose", "say which daemon is used and each request it answers (status, time); stack traces of unexpected errors")
    .helpCommand(true)
    .showSuggestionAfterError(true)
    .hook("preAction", (_program, action) => {
      const o = action.optsWithGlobals<{ quiet?: boolean; verbose?: boolean }>();
      ctx.quiet = o.quiet === true;
      ctx.verbose = o.verbose === true && !ctx.quiet;
    });
  for (const register of GROUPS) register(program, ctx);
  configure(program, ctx);
  return program;
}

/** Every command reports through us: no process.exit, help and errors to our output. */
function configure(cmd: Command, ctx: CliContext): void {
  cmd.exitOverride();
  cmd.configureOutput({
    writeOut: (s) => ctx.output.out(s),
    writeErr: (s) => ctx.output.err(s),
    // Commander's own usage errors are re-printed by report() as one line.
    outputError: () => {},
  });
  for (const sub of cmd.commands) configure(sub, ctx);
}

function report(e: unknown, ctx: CliContext): number {
  if (e instanceof CommanderError) {
    if (e.code === "commander.helpDisplayed" || e.code === "commander.version") return EXIT_OK;
    // `svc` alone prints help to stderr as a usage error; `svc help x` is a success.
    if (e.code === "commander.help") return e.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    let message = oneLine(e.message.replace(/^error: /, "")).replace(/^\((Did you mean .*)\)$/, "$1");
    if (e.code === "commander.unknownCommand") message = withoutRiskySuggestion(message);
    ctx.output.err(`svc: ${message} (see 'svc --help')\n`);
    return EXIT_USAGE;
  }
  if (e instanceof CliError) {
    if (e.message !== "") ctx.output.err(`svc: ${oneLine(e.message)}\n`);
    return e.exitCode;
  }
  // A bug: still one line, no stack trace (SVC_DEBUG=1 shows it).
  ctx.output.err(`svc: unexpected error: ${oneLine(errorMessage(e))}\n`);
  if (ctx.env.SVC_DEBUG || ctx.verbose) ctx.output.err(`${e instanceof Error ? e.stack : String(e)}\n`);
  return EXIT_FAILURE;
}

/**
 * Commands that stop, kill or skip something. A typo must never be answered
 * with one of them (`svc show` mistyped must not suggest `svc stop`): a
 * did-you-mean is often run without a second look.
 */
export const RISKY_COMMANDS: ReadonlySet<string> = new Set(["stop", "restart", "cancel", "skip", "pause", "restore", "uninstall"]);

/** Commander's `(Did you mean x?)` / `(Did you mean one of x, y?)` without the risky commands. */
export function withoutRiskySuggestion(message: string): string {
  const m = /^(.*?)\s*\(Did you mean (?:one of )?(.+?)\?\)$/.exec(message);
  if (!m) return message;
  const safe = m[2]!.split(", ").filter((c) => !RISKY_COMMANDS.has(c));
  if (safe.length === 0) return m[1]!;
  return `${m[1]} (Did you mean ${safe.length > 1 ? "one of " : ""}${safe.join(", ")}?)`;
}

/** `svc config show | head`: a reader that goes away is not an error worth a stack trace. */
function quietOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
      throw e;
    });
  }
}

let cachedVersion: string | null = null;

/** The package version, from package.json two levels above this file (src/cli or dist/cli). */
export function packageVersion(): string {
  if (cachedVersion === null) {
    try {
      const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string };
      cachedVersion = pkg.version ?? "0.0.0";
    } catch {
      cachedVersion = "0.0.0";
    }
  }
  return cachedVersion;
}
