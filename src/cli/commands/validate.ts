/**
 * `svc validate [--strict] [--json]`: lint svc.yaml and svcd.yaml offline.
 * One line per issue (`svc.yaml:12:5: jobs.extract.time: ...`), exit 1 on
 * any error, and with --strict on any warning too.
 */
import type { Command } from "commander";
import type { ConfigIssue } from "../../config/types.js";
import { globalsOf, type CliContext } from "../context.js";
import type { LoadedFiles } from "../configFiles.js";
import { CliError, EXIT_FAILURE, printError, printJson, printLine } from "../output.js";

export function register(program: Command, ctx: CliContext): void {
  program
    .command("validate")
    .description("check svc.yaml and svcd.yaml (works without a running daemon)")
    .option("--strict", "also report warnings (missing descriptions, inline bearer token, * CORS origin) and fail on them")
    .option("--json", 'print {"valid", "errors", "warnings"}')
    .action(async (opts: { strict?: boolean; json?: boolean }, cmd: Command) => {
      const { formatIssue, loadBoth, shownPath } = await import("../configFiles.js");
      let files: LoadedFiles;
      try {
        files = loadBoth(ctx, globalsOf(cmd));
      } catch (e) {
        // No svc.yaml found: --json still prints one JSON document.
        if (!opts.json || !(e instanceof CliError)) throw e;
        const issue: ConfigIssue = { file: "", line: 0, column: 0, path: "", message: e.message };
        printJson(ctx.output, { valid: false, errors: [issue], warnings: [] });
        throw new CliError("", EXIT_FAILURE);
      }
      const errors: ConfigIssue[] = [];
      const warnings: ConfigIssue[] = [];
      for (const r of [files.project, files.daemon]) {
        if (!r.ok) errors.push(...r.errors);
        warnings.push(...r.warnings);
      }
      const failed = errors.length > 0 || (opts.strict === true && warnings.length > 0);

      if (opts.json) {
        printJson(ctx.output, { valid: !failed, errors, warnings });
      } else {
        for (const e of errors) printError(ctx.output, formatIssue(e, shownPath(ctx, e.file)));
        if (opts.strict) {
          for (const w of warnings) printError(ctx.output, formatIssue(w, shownPath(ctx, w.file), "warning: "));
        }
        if (!failed && files.project.ok) {
          const { jobs, integrations } = files.project.value;
          const hint = opts.strict ? "" : warningHint(files.project.warnings.length);
          printLine(
            ctx.output,
            `${shownPath(ctx, files.projectFile)}: ok (${plural(jobs.size, "job")}, ${plural(integrations.size, "integration")})${hint}`,
          );
          if (files.daemonFile !== null) {
            const dHint = opts.strict ? "" : warningHint(files.daemon.warnings.length);
            printLine(ctx.output, `${shownPath(ctx, files.daemonFile)}: ok${dHint}`);
          }
        }
      }
      if (failed) throw new CliError("", EXIT_FAILURE);
    });
}

function warningHint(n: number): string {
  return n > 0 ? `; ${plural(n, "warning")}, see --strict` : "";
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
