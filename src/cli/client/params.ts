/**
 * `-p key=value` (repeatable) and `--params-file file.json` for `svc run` and
 * `svc backfill` (CONTRACT §7.2). A command line has only text, so each value
 * is converted by the job's declaration (read from the daemon) before it is
 * sent: `-p limit=10` sends the number 10 to an integer param. What cannot be
 * converted is sent as text, and the daemon names the problem (422,
 * `params.limit must be an integer`). A file's values are JSON, already typed;
 * `-p` wins over the file for the same name.
 */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { CliError, UsageError } from "../output.js";
import type { DaemonClient } from "./http.js";
import { forJob, jobPath } from "./jobs.js";

type Value = string | number | boolean;

interface Declared {
  type?: string;
}

/** Commander collector for a repeatable `-p key=value`. */
export function collectParam(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Adds `-p` and `--params-file` to a command. */
export function paramOptions(cmd: Command): Command {
  return cmd
    .option("-p, --param <key=value>", "a run parameter (repeatable); converted by the job's declared type", collectParam)
    .option("--params-file <file.json>", "run parameters from a JSON object file (-p wins for the same name)");
}

export interface ParamOpts {
  param?: string[];
  paramsFile?: string;
}

/** The `params` to send for `job`, or undefined when none was given. */
export async function paramsFor(client: DaemonClient, job: string, opts: ParamOpts, command: string): Promise<Record<string, Value> | undefined> {
  const pairs = parsePairs(opts.param ?? [], command);
  const fromFile = opts.paramsFile === undefined ? {} : readParamsFile(opts.paramsFile);
  if (pairs.size === 0 && opts.paramsFile === undefined) return undefined;
  const out: Record<string, Value> = { ...fromFile };
  if (pairs.size > 0) {
    const declared = await declaredParams(client, job);
    for (const [name, text] of pairs) out[name] = convert(text, declared[name]);
  }
  return out;
}

function parsePairs(list: string[], command: string): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const item of list) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new UsageError(`-p takes key=value, got "${item}"`, `see 'svc ${command} --help'`);
    const name = item.slice(0, eq);
    if (pairs.has(name)) throw new UsageError(`-p ${name} is given twice`, `see 'svc ${command} --help'`);
    pairs.set(name, item.slice(eq + 1));
  }
  return pairs;
}

function readParamsFile(file: string): Record<string, Value> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new CliError(`--params-file ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new CliError(`--params-file ${file}: not valid JSON (${(e as Error).message})`);
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new CliError(`--params-file ${file}: must hold a JSON object of param name -> value, like {"day": "2026-11-01"}`);
  }
  return data as Record<string, Value>;
}

async function declaredParams(client: DaemonClient, job: string): Promise<Record<string, Declared>> {
  const res = await forJob(job, () => client.get<{ job: { params?: Record<string, Declared> } }>(jobPath(job), { runs: 0 }));
  return res.job.params ?? {};
}

/** Text to the declared type; text that does not convert is sent as is (the daemon says what is wrong). */
export function convert(text: string, decl: Declared | undefined): Value {
  switch (decl?.type) {
    case "integer":
      return /^[+-]?[0-9]+$/.test(text.trim()) && Number.isSafeInteger(Number(text)) ? Number(text) : text;
    case "number": {
      // Decimal notation only: Number() also reads 0x10, 0b11 and 0o7, which no one means as a number here.
      const n = Number(text);
      return /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(text) && Number.isFinite(n) ? n : text;
    }
    case "boolean":
      return text === "true" ? true : text === "false" ? false : text;
    default:
      return text;
  }
}
