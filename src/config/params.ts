/**
 * Run parameters (CONTRACT §7.2): the `params` declaration of a job, checked
 * at load, and the check of the values a trigger passes, shared by the
 * engine (manual runs, backfills) and the loader (defaults).
 *
 * A declaration is `{type, default, required, values, pattern, description,
 * secret}`. A parameter without a default is required. Values are typed JSON
 * (the API takes them as they are; the CLI converts `-p key=value` by the
 * declaration before sending them).
 */
import type { ParamSpec, ParamType, ParamValue } from "./types.js";
import type { IssueList, PathSeg } from "./issues.js";
import { isDict, isString, type Dict } from "./values.js";

export const PARAM_NAME_PATTERN = "^[a-z_][a-z0-9_]*$";
export const PARAM_TYPES: readonly ParamType[] = ["string", "integer", "number", "boolean", "enum"];
export const MAX_PARAMS = 20;
/** The longest string value a trigger may pass (it becomes an environment variable). */
export const MAX_PARAM_LENGTH = 4096;

/** One problem with a passed value: `path` is `params.NAME` (or `params`). */
export interface ParamIssue {
  path: string;
  message: string;
}

export type ParamCheck = { ok: true; values: Record<string, ParamValue> } | { ok: false; errors: ParamIssue[] };

/**
 * The job's declarations: each name of `defaults.params` and the job's own
 * `params`, the job's declaration replacing the inherited one whole.
 * `scheduled` is false for manual jobs: only they may declare a parameter
 * without a default, because every other run takes the defaults.
 */
export function parseParams(
  job: string,
  own: unknown,
  inherited: unknown,
  scheduled: boolean,
  issues: IssueList,
): Record<string, ParamSpec> {
  const out: Record<string, ParamSpec> = {};
  const sources: [Dict, PathSeg[]][] = [
    [isDict(inherited) ? inherited : {}, ["defaults", "params"]],
    [isDict(own) ? own : {}, ["jobs", job, "params"]],
  ];
  const where = new Map<string, PathSeg[]>();
  for (const [decls, base] of sources) {
    for (const [name, raw] of Object.entries(decls)) {
      if (!new RegExp(PARAM_NAME_PATTERN).test(name) || !isDict(raw)) continue; // the schema reported it
      const spec = parseOne(name, raw, [...base, name], issues);
      if (spec) {
        out[name] = spec;
        where.set(name, [...base, name]);
      } else {
        delete out[name];
      }
    }
  }
  const names = Object.keys(out);
  // More than MAX_PARAMS in one map is the schema's error; this is the count after merging.
  if (names.length > MAX_PARAMS && Object.keys(sources[0]![0]).length <= MAX_PARAMS && Object.keys(sources[1]![0]).length <= MAX_PARAMS) {
    issues.error(["jobs", job, "params"], `job "${job}" has ${names.length} params with those of defaults; at most ${MAX_PARAMS} are allowed`);
  }
  if (scheduled) {
    for (const spec of Object.values(out)) {
      if (spec.required) {
        issues.error(
          where.get(spec.name)!,
          `param "${spec.name}" of job "${job}" has no default, but scheduled, catch-up and dependency-triggered runs take the defaults: ` +
            `give it a default (or make the job frequency: manual)`,
        );
      }
    }
  }
  return out;
}

function parseOne(name: string, raw: Dict, path: PathSeg[], issues: IssueList): ParamSpec | null {
  const type: ParamType = isString(raw.type) && (PARAM_TYPES as readonly string[]).includes(raw.type) ? (raw.type as ParamType) : "string";
  if (raw.type !== undefined && !(PARAM_TYPES as readonly unknown[]).includes(raw.type)) return null; // the schema reported it
  let ok = true;
  let values: string[] | null = null;
  if (raw.values !== undefined) {
    if (type !== "enum") {
      issues.error([...path, "values"], `values is only used by type: enum (param "${name}" has type ${type})`);
      ok = false;
    } else if (Array.isArray(raw.values) && raw.values.every(isString)) {
      values = [...raw.values];
    } else {
      ok = false; // the schema reported it
    }
  } else if (type === "enum") {
    issues.error([...path, "values"], `param "${name}" has type enum: list its allowed values, e.g. values: [full, incremental]`);
    ok = false;
  }
  let pattern: string | null = null;
  if (raw.pattern !== undefined) {
    if (type !== "string") {
      issues.error([...path, "pattern"], `pattern is only used by type: string (param "${name}" has type ${type})`);
      ok = false;
    } else if (isString(raw.pattern)) {
      try {
        new RegExp(raw.pattern, "u");
        pattern = raw.pattern;
      } catch (e) {
        issues.error([...path, "pattern"], `invalid regular expression: ${(e as Error).message}`);
        ok = false;
      }
    }
  }
  const explicitRequired = typeof raw.required === "boolean" ? raw.required : null;
  const spec: ParamSpec = {
    name,
    type,
    default: null,
    required: false,
    values,
    pattern,
    description: isString(raw.description) ? raw.description : null,
    secret: raw.secret === true,
  };
  const hasDefault = raw.default !== undefined && raw.default !== null;
  if (hasDefault && ok) {
    const problem = checkValue(spec, raw.default);
    if (problem !== null) {
      issues.error([...path, "default"], `default ${problem}`);
      ok = false;
    } else {
      spec.default = raw.default as ParamValue;
    }
  }
  if (explicitRequired === true && hasDefault) {
    issues.error(
      [...path, "required"],
      `param "${name}" has a default, so it is never missing: remove required: true or the default`,
    );
    ok = false;
  }
  spec.required = explicitRequired ?? !hasDefault;
  return ok ? spec : null;
}

/**
 * Checks the values a trigger passes against the declarations: unknown names,
 * wrong types, values outside `values` or `pattern`, missing required ones.
 * Returns every problem (not just the first), or the values to store: the
 * passed ones plus the defaults of the others.
 */
export function checkParams(specs: Readonly<Record<string, ParamSpec>>, given: unknown): ParamCheck {
  const errors: ParamIssue[] = [];
  const values: Record<string, ParamValue> = {};
  if (given !== undefined && given !== null && !isDict(given)) {
    return { ok: false, errors: [{ path: "params", message: "must be an object of param name -> value" }] };
  }
  const passed = (given ?? {}) as Dict;
  const declared = Object.keys(specs);
  for (const [name, value] of Object.entries(passed)) {
    // Own names only: `constructor` or `toString` is not a declared param.
    const spec = Object.hasOwn(specs, name) ? specs[name] : undefined;
    if (!spec) {
      const hint = declared.length === 0 ? "this job declares no params" : `this job declares ${declared.join(", ")}`;
      errors.push({ path: `params.${name}`, message: `unknown param "${name}": ${hint}` });
      continue;
    }
    if (value === null || value === undefined) continue; // as if not passed
    const problem = checkValue(spec, value);
    if (problem !== null) errors.push({ path: `params.${name}`, message: problem });
    else values[name] = value as ParamValue;
  }
  for (const spec of Object.values(specs)) {
    if (values[spec.name] !== undefined || errors.some((e) => e.path === `params.${spec.name}`)) continue;
    if (spec.default !== null) values[spec.name] = spec.default;
    else if (spec.required) errors.push({ path: `params.${spec.name}`, message: `is required (${describeType(spec)})` });
  }
  if (errors.length > 0) return { ok: false, errors };
  // In declaration order, whatever order they were passed in.
  const ordered: Record<string, ParamValue> = {};
  for (const name of declared) if (values[name] !== undefined) ordered[name] = values[name];
  return { ok: true, values: ordered };
}

/** The defaults alone (scheduled, catch-up and dependency-triggered runs). */
export function defaultParams(specs: Readonly<Record<string, ParamSpec>>): Record<string, ParamValue> {
  const out: Record<string, ParamValue> = {};
  for (const spec of Object.values(specs)) if (spec.default !== null) out[spec.name] = spec.default;
  return out;
}

/** The names declared `secret: true`. */
export function secretParamNames(specs: Readonly<Record<string, ParamSpec>>): string[] {
  const names: string[] = [];
  for (const spec of Object.values(specs)) if (spec.secret) names.push(spec.name);
  return names;
}

/** Why `value` does not fit `spec`, or null. The text reads after the param's name or "default". */
export function checkValue(spec: ParamSpec, value: unknown): string | null {
  // A secret's value is never echoed, not even in an error.
  const show = spec.secret ? () => "***" : showValue;
  // A process's arguments and environment cannot hold one: refused here, never at the start.
  if (isString(value) && value.includes("\0")) return "must not contain a NUL character (\\0): no process can be given one";
  switch (spec.type) {
    case "integer":
      return typeof value === "number" && Number.isSafeInteger(value) ? null : `must be an integer (got ${show(value)})`;
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? null : `must be a number (got ${show(value)})`;
    case "boolean":
      return typeof value === "boolean" ? null : `must be true or false (got ${show(value)})`;
    case "enum":
      return isString(value) && spec.values!.includes(value) ? null : `must be one of ${spec.values!.join(", ")} (got ${show(value)})`;
    case "string": {
      if (!isString(value)) return `must be a string (got ${show(value)})`;
      if (value.length > MAX_PARAM_LENGTH) return `is ${value.length} characters long; at most ${MAX_PARAM_LENGTH} are allowed`;
      if (spec.pattern !== null && !new RegExp(`^(?:${spec.pattern})$`, "u").test(value)) {
        return `must match the pattern ${spec.pattern} (the whole value)`;
      }
      return null;
    }
  }
}

function describeType(spec: ParamSpec): string {
  if (spec.type === "enum") return `one of ${spec.values!.join(", ")}`;
  if (spec.type === "string" && spec.pattern !== null) return `a string matching ${spec.pattern}`;
  return `${spec.type === "integer" ? "an" : "a"} ${spec.type}`;
}

function showValue(value: unknown): string {
  if (isString(value)) return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  if (Array.isArray(value)) return "a list";
  if (isDict(value)) return "an object";
  return String(value);
}

/** Environment name of a param: `SVC_PARAM_<NAME in upper case>`. */
export function paramEnvName(name: string): string {
  return `SVC_PARAM_${name.toUpperCase()}`;
}

/** `SVC_OUTPUT_<JOB>_<VAR>`: upper case, every other character than a letter or digit as `_`. */
export function outputEnvName(job: string, varName: string): string {
  const clean = (s: string) => s.replace(/[^A-Za-z0-9]/g, "_").toUpperCase();
  return `SVC_OUTPUT_${clean(job)}_${clean(varName)}`;
}

/** The value as text, as a job sees it (env and placeholders). */
export function paramText(value: ParamValue): string {
  return typeof value === "string" ? value : String(value);
}
