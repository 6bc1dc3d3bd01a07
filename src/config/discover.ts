/**
 * Where the files are (CONTRACT §1): svc.yaml by -c, SVC_CONFIG, or the
 * first svc.yaml in the working directory or its parents (like git finds
 * .git); the data directory; svcd.yaml beside svc.yaml.
 */
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { SvcError } from "../shared/svcError.js";

export const PROJECT_FILE = "svc.yaml";
export const DAEMON_FILE = "svcd.yaml";
export const DATA_DIR_NAME = ".svc";

/** Thrown by findConfig when no svc.yaml can be found; the message is one line for users. */
export class ConfigNotFoundError extends SvcError {
  constructor(message: string) {
    super("not_found", message);
    this.name = "ConfigNotFoundError";
  }
}

export interface FindOptions {
  /** The -c/--config value. */
  flag?: string | null;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * The last directory the upward search looks in (default: the filesystem
   * root). It bounds the search the way GIT_CEILING_DIRECTORIES bounds git's,
   * so a caller (a test in a temp directory) gets a definite answer whatever
   * the directories above hold. Ignored when it is not cwd or one of its parents.
   */
  stopAt?: string;
}

/**
 * The absolute path of svc.yaml. An explicit path (-c, SVC_CONFIG) is
 * returned as given even if missing, so that loading reports it; the search
 * throws ConfigNotFoundError when no directory up to the root has one.
 */
export function findConfig({ flag, env = process.env, cwd = process.cwd(), stopAt }: FindOptions = {}): string {
  if (flag) return resolve(cwd, flag);
  if (env.SVC_CONFIG) return resolve(cwd, env.SVC_CONFIG);
  const stop = stopAt === undefined ? null : resolve(cwd, stopAt);
  let dir = resolve(cwd);
  for (;;) {
    const candidate = join(dir, PROJECT_FILE);
    if (isFile(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir || dir === stop) break;
    dir = parent;
  }
  const where = dir === stop ? `any parent directory up to ${stop}` : "any parent directory";
  throw new ConfigNotFoundError(
    `no ${PROJECT_FILE} found in ${resolve(cwd)} or ${where}: pass -c PATH, set SVC_CONFIG, or run where ${PROJECT_FILE} is`,
  );
}

export interface DataDirOptions {
  /** svc.yaml (absolute, or relative to cwd). */
  configFile: string;
  /** The --data-dir value. */
  flag?: string | null;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** `<dir of svc.yaml>/.svc`, or --data-dir, or SVC_DATA_DIR (absolute; not created here). */
export function dataDir({ configFile, flag, env = process.env, cwd = process.cwd() }: DataDirOptions): string {
  if (flag) return resolve(cwd, flag);
  if (env.SVC_DATA_DIR) return resolve(cwd, env.SVC_DATA_DIR);
  return join(dirname(resolve(cwd, configFile)), DATA_DIR_NAME);
}

/**
 * svcd.yaml: the --daemon-config path when given (returned even if missing,
 * so loading reports it), else svcd.yaml beside svc.yaml when it exists, else
 * null (all defaults).
 */
export function findDaemonConfig(projectFile: string, flag?: string | null, cwd: string = process.cwd()): string | null {
  if (flag) return resolve(cwd, flag);
  const beside = join(dirname(resolve(cwd, projectFile)), DAEMON_FILE);
  return existsSync(beside) ? beside : null;
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
