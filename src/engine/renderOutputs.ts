/**
 * `{{ outputs.<job>.<var> }}` in commands and env values (SPEC rule 7), and the
 * same way `{{ params.<name> }}` (`SVC_PARAM_<NAME>`, CONTRACT §7.2) and
 * `{{ run.scheduled_at }}` (`SVC_SCHEDULED_AT`, §7.3).
 *
 * Quoting decision (docs/CONFIG.md "Output passing"): every referenced value
 * is also exported to the job as `SVC_OUTPUT_<JOB>_<VAR>`. In a string
 * command (run by the shell) the placeholder is replaced by a reference to
 * that variable, quoted for the shell context it sits in, never by the value
 * itself. The shell never re-parses the result of a variable expansion, so a
 * value like `$(touch pwned)` is data, not code, whatever the context:
 *   unquoted        ->  "${SVC_OUTPUT_X_Y}"   (exact, no word splitting)
 *   "double quoted" ->  ${SVC_OUTPUT_X_Y}
 *   'single quoted' ->  '"${SVC_OUTPUT_X_Y}"' (closes, expands, reopens)
 * Array commands and env values get the value itself: no shell reads them.
 */

import { PLACEHOLDER } from "../config/outputRefs.js";
import { outputEnvName, paramEnvName } from "../config/params.js";

export { outputEnvName };

export { findOutputRefs, type OutputRef } from "../config/outputRefs.js";


/** Values by (job, var), as looked up in the current cycle; and the run's params and slot. */
export class OutputValues {
  private readonly byJob = new Map<string, Map<string, string>>();
  private readonly params = new Map<string, string>();
  private scheduledAt: string | undefined;

  setParam(name: string, text: string): void {
    this.params.set(name, text);
  }

  /** The run's slot as its jobs see it ("" for a manual run). */
  setScheduledAt(text: string): void {
    this.scheduledAt = text;
  }

  /** The variable a placeholder match (of PLACEHOLDER) stands for and its value; undefined when it has none. */
  resolve(m: RegExpMatchArray): { name: string; value: string } | undefined {
    const [, job, varName, param, runField] = m;
    if (job !== undefined && varName !== undefined) {
      const value = this.get(job, varName);
      return value === undefined ? undefined : { name: outputEnvName(job, varName), value };
    }
    if (param !== undefined) {
      const value = this.params.get(param);
      return value === undefined ? undefined : { name: paramEnvName(param), value };
    }
    if (runField === "scheduled_at" && this.scheduledAt !== undefined) return { name: "SVC_SCHEDULED_AT", value: this.scheduledAt };
    return undefined;
  }

  set(job: string, varName: string, value: string): void {
    let vars = this.byJob.get(job);
    if (!vars) this.byJob.set(job, (vars = new Map()));
    vars.set(varName, value);
  }

  get(job: string, varName: string): string | undefined {
    return this.byJob.get(job)?.get(varName);
  }

  varsOf(job: string): string[] {
    return [...(this.byJob.get(job)?.keys() ?? [])];
  }
}

/** Replaces placeholders with the values themselves (array args, env values). */
export function renderLiteral(text: string, values: OutputValues): string {
  return text.replace(PLACEHOLDER, (...args: unknown[]) => {
    const m = args.slice(0, 5) as unknown as RegExpMatchArray;
    return values.resolve(m)?.value ?? (args[0] as string);
  });
}

type QuoteState = "none" | "single" | "double";

/** Replaces placeholders with quoted env references, by shell quoting context. */
export function renderShell(command: string, values: OutputValues): string {
  let out = "";
  let state: QuoteState = "none";
  let i = 0;
  PLACEHOLDER.lastIndex = 0;
  for (const m of command.matchAll(PLACEHOLDER)) {
    const start = m.index ?? 0;
    state = scanQuotes(command, i, start, state);
    out += command.slice(i, start);
    const target = values.resolve(m);
    if (target === undefined) {
      out += m[0];
    } else {
      const ref = "${" + target.name + "}";
      out += state === "none" ? `"${ref}"` : state === "double" ? ref : `'"${ref}"'`;
    }
    i = start + m[0].length;
  }
  return out + command.slice(i);
}

/** Follows POSIX sh quoting from `from` to `to`, starting in `state`. */
function scanQuotes(s: string, from: number, to: number, state: QuoteState): QuoteState {
  for (let i = from; i < to; i++) {
    const c = s[i];
    if (state === "single") {
      if (c === "'") state = "none";
    } else if (c === "\\") {
      i++; // the next character is escaped
    } else if (state === "double") {
      if (c === '"') state = "none";
    } else if (c === "'") {
      state = "single";
    } else if (c === '"') {
      state = "double";
    }
  }
  return state;
}
