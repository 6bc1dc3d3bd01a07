/**
 * `${env:VAR}` references and the `.env` file beside svc.yaml.
 * Lookup order (SPEC): the process environment first, then `.env`.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { parse as DotenvParse } from "dotenv";
import { errorMessage } from "../shared/toError.js";

const require = createRequire(import.meta.url);
const REF = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;

export function hasEnvRefs(value: string): boolean {
  return value.includes("${env:");
}

/** The variable names referenced by `value`, in order. */
export function envRefNames(value: string): string[] {
  return [...value.matchAll(REF)].map((m) => m[1]!);
}

/**
 * Replaces every `${env:VAR}` in `value`. Returns the first unset variable
 * instead when one is missing. An empty value counts as set.
 */
export function resolveEnvRefs(
  value: string,
  env: NodeJS.ProcessEnv,
  dotenv: Readonly<Record<string, string>>,
): { value: string } | { unset: string } {
  if (!hasEnvRefs(value)) return { value };
  let unset: string | null = null;
  const out = value.replace(REF, (whole, name: string) => {
    const v = env[name] ?? (Object.prototype.hasOwnProperty.call(dotenv, name) ? dotenv[name] : undefined);
    if (v === undefined) {
      unset ??= name;
      return whole;
    }
    return v;
  });
  return unset === null ? { value: out } : { unset };
}

/**
 * Variables of `<dir of configFile>/.env`, parsed with dotenv's parser.
 * A missing file is an empty map; an unreadable one is reported.
 */
export function loadDotenv(configFile: string): { vars: Record<string, string>; error: string | null } {
  const file = join(dirname(configFile), ".env");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { vars: {}, error: null };
    return { vars: {}, error: `cannot read ${file}: ${errorMessage(e)}` };
  }
  // dotenv is loaded only when a .env exists.
  const { parse } = require("dotenv") as { parse: typeof DotenvParse };
  return { vars: { ...parse(text) }, error: null };
}
