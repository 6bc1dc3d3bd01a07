/**
 * The offline commands' access to the config files: discovery per
 * CONTRACT §1, loading both files, and printing their issues the way
 * `svc validate` does.
 *
 * Commands import this module inside their actions (`await import`), so that
 * the config loader (~25 modules, ~30 ms to load here) is loaded only by the
 * commands that read the files, not by `svc status` or `svc --version`.
 */
import { isAbsolute, relative } from "node:path";
import {
  ConfigNotFoundError,
  findConfig,
  findDaemonConfig,
  formatIssue,
  loadDaemonConfig,
  loadProject,
} from "../config/index.js";
import type { ConfigIssue, DaemonConfig, LoadResult, ProjectConfig } from "../config/types.js";

export { daemonView, effectiveView, formatIssue, frequencyLabel, scheduleLabel } from "../config/index.js";
export { yaml } from "../config/yamlSource.js";
import type { CliContext, GlobalOptions } from "./context.js";
import { CliError, printError } from "./output.js";

export interface LoadedFiles {
  projectFile: string;
  daemonFile: string | null;
  project: LoadResult<ProjectConfig>;
  daemon: LoadResult<DaemonConfig>;
}

/** svc.yaml's path; a missing svc.yaml (nothing found by the search) is a one-line CliError. */
export function projectPath(ctx: CliContext, globals: GlobalOptions): string {
  try {
    return findConfig({ flag: globals.config, env: ctx.env, cwd: ctx.cwd });
  } catch (e) {
    if (e instanceof ConfigNotFoundError) throw new CliError(e.message);
    throw e;
  }
}

export function loadBoth(ctx: CliContext, globals: GlobalOptions): LoadedFiles {
  const projectFile = projectPath(ctx, globals);
  const daemonFile = findDaemonConfig(projectFile, globals.daemonConfig, ctx.cwd);
  return {
    projectFile,
    daemonFile,
    project: loadProject(projectFile, ctx.env),
    daemon: loadDaemonConfig(daemonFile, ctx.env),
  };
}

/** The project, or its errors printed (one line each) and a CliError exit 1. */
export function requireProject(ctx: CliContext, globals: GlobalOptions): ProjectConfig {
  const file = projectPath(ctx, globals);
  const r = loadProject(file, ctx.env);
  if (!r.ok) failWithIssues(ctx, r.errors);
  return r.value;
}

export function failWithIssues(ctx: CliContext, errors: readonly ConfigIssue[]): never {
  for (const e of errors) printError(ctx.output, formatIssue(e, shownPath(ctx, e.file)));
  throw new CliError(""); // already reported, one line per error
}

/** A path as people want to read it: relative to the cwd when below it, else absolute. */
export function shownPath(ctx: CliContext, file: string): string {
  if (!isAbsolute(file)) return file;
  const rel = relative(ctx.cwd, file);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}
