/**
 * How `svc` talks to people (CONTRACT §1): data on stdout, errors on stderr
 * as one line each, `--json` as one JSON document, exit codes 0 success,
 * 1 failure, 2 usage error. Commands throw CliError; main() prints it.
 */
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * An error meant for the user: printed as `svc: <message>`, never with a
 * stack trace. An empty message means it was already reported.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
  }
}

/** A usage error (bad flag value, unknown job name syntax...): exit 2 with a hint. */
export class UsageError extends CliError {
  constructor(message: string, hint = "see 'svc --help'") {
    super(`${message} (${hint})`, EXIT_USAGE);
  }
}

/** Where output goes; tests pass buffers, main() passes the process streams. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
}

export const processOutput: Output = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

export function printLine(o: Output, line = ""): void {
  o.out(line + "\n");
}

export function printError(o: Output, line: string): void {
  o.err(oneLine(line) + "\n");
}

/**
 * A note for people (what is being done, what was started): `svc: <text>` on
 * stderr, silenced by `-q`. Data goes to stdout, errors are thrown.
 */
export function note(ctx: { output: Output; quiet?: boolean }, text: string): void {
  if (!ctx.quiet) ctx.output.err(`svc: ${oneLine(text)}\n`);
}

/** A confirmation on stdout (`paused extract`): what a command did, silenced by `-q`. */
export function confirm(ctx: { output: Output; quiet?: boolean }, line: string): void {
  if (!ctx.quiet) printLine(ctx.output, line);
}

export function printJson(o: Output, value: unknown): void {
  o.out(JSON.stringify(value, null, 2) + "\n");
}

/** Messages from libraries can span lines; errors are one line each. */
export function oneLine(text: string): string {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .join(" ");
}

/**
 * Checks, before any work is done, that `--output FILE` (relative to the working directory) can be
 * written: a path that cannot is a clear error at once, not an "unexpected error" at the end. The file
 * itself is left as it is (a failed export must not empty last night's); returns its absolute path.
 */
export function checkOutputFile(cwd: string, file: string): string {
  const path = resolve(cwd, file);
  try {
    if (existsSync(path)) {
      if (statSync(path).isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
      accessSync(path, constants.W_OK);
    } else {
      const dir = dirname(path);
      if (!existsSync(dir)) throw Object.assign(new Error("no directory"), { code: "ENOENT" });
      accessSync(dir, constants.W_OK);
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? "its directory does not exist"
        : code === "EACCES" || code === "EPERM"
          ? "permission denied"
          : code === "EISDIR"
            ? "it is a directory"
            : code === "EROFS"
              ? "the file system is read-only"
              : (code ?? String(e));
    throw new CliError(`cannot write ${file}: ${why}`);
  }
  return path;
}
