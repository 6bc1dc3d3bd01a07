/**
 * `svc import crontab [FILE|-] [--system] [--write]` (CONTRACT §7.1): prints
 * an svc.yaml with one job per crontab line, or writes it (never over an
 * existing file). Without FILE it reads `crontab -l` (or /etc/crontab with
 * --system); `-` is stdin. The result is checked with the loader before it
 * is shown: what it prints passes `svc validate`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { globalsOf, type CliContext } from "../context.js";
import { CliError, printError, printLine } from "../output.js";

export function register(program: Command, ctx: CliContext): void {
  const imp = program.command("import").description("turn other schedulers' files into svc.yaml");
  imp
    .command("crontab")
    .description("print an svc.yaml with one job per crontab line (what cannot be imported stays as a comment saying why)")
    .argument("[file]", "a crontab file, or - for stdin (default: crontab -l; with --system, /etc/crontab)")
    .option("--system", "the /etc/crontab form, with a user field after the schedule")
    .option("--write", "write svc.yaml (the -c path, else ./svc.yaml) instead of printing it; never overwrites")
    .action(async (file: string | undefined, opts: { system?: boolean; write?: boolean }, cmd: Command) => {
      const system = opts.system === true;
      const { text, source } = readInput(file, system, ctx);
      const { importCrontab } = await import("../../config/crontabImport.js");
      const { isKnownZone } = await import("../../config/values.js");
      const result = importCrontab(text, { system, source, isZone: isKnownZone });
      const target = resolve(ctx.cwd, globalsOf(cmd).config ?? "svc.yaml");

      // The promise of the command: its output loads. A failure here is a bug of the importer.
      const { parseProjectText } = await import("../../config/project.js");
      const check = parseProjectText(result.yaml, target, {});
      if (!check.ok) {
        const first = check.errors[0]!;
        throw new CliError(`internal error: the imported svc.yaml does not validate (line ${first.line}: ${first.message}); please report it with the crontab line`);
      }

      if (opts.write) {
        if (existsSync(target)) {
          throw new CliError(`${target} exists and is not overwritten: run without --write to print the jobs, and merge them by hand`);
        }
        writeFileSync(target, result.yaml, { flag: "wx" });
        printLine(ctx.output, `wrote ${target}: ${result.jobs} job${result.jobs === 1 ? "" : "s"}${skippedNote(result.skipped.length)}`);
      } else {
        ctx.output.out(result.yaml);
        if (result.skipped.length > 0) printError(ctx.output, `svc: ${skippedNote(result.skipped.length).slice(2)} (see the comments in the output)`);
      }
    });
}

function skippedNote(n: number): string {
  return n === 0 ? "" : `; ${n} line${n === 1 ? "" : "s"} kept as comments, not imported`;
}

function readInput(file: string | undefined, system: boolean, ctx: CliContext): { text: string; source: string } {
  if (file === "-") return { text: readFileSync(0, "utf8"), source: "stdin" };
  if (file !== undefined || system) {
    const path = resolve(ctx.cwd, file ?? "/etc/crontab");
    try {
      return { text: readFileSync(path, "utf8"), source: file ?? "/etc/crontab" };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new CliError(`cannot read ${path}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : (e as Error).message}`);
    }
  }
  try {
    return { text: execFileSync("crontab", ["-l"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }), source: "crontab -l" };
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === "ENOENT") throw new CliError("crontab is not installed here: pass a crontab file, or - to read stdin");
    throw new CliError(`crontab -l failed: ${(err.stderr ?? err.message).trim()} (pass a file, or - to read stdin)`);
  }
}
