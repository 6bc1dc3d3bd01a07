/**
 * Runs the precompiled JSON Schema validators and turns ajv's errors into
 * readable issues: unknown fields with a did-you-mean, missing fields, and
 * each schema node's own `x-message`.
 */
import type { JsonSchema } from "./schema/jsonSchema.js";
import { schemaForInstance } from "./schema/jsonSchema.js";
import { svcSchema } from "./schema/svcSchema.js";
import { svcdSchema } from "./schema/svcdSchema.js";
import { validateSvc, validateSvcd } from "./schema/validators.generated.js";
import { fromPointer, type RawIssue } from "./issues.js";
import { closest } from "./suggest.js";

interface AjvError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  propertyName?: string;
}

type Validator = ((data: unknown) => boolean) & { errors?: AjvError[] | null };

const VALIDATORS: Record<"svc" | "svcd", { validate: Validator; schema: JsonSchema }> = {
  svc: { validate: validateSvc as Validator, schema: svcSchema },
  svcd: { validate: validateSvcd as Validator, schema: svcdSchema },
};

/** Fields whose invalid values are safe to echo back in a message. */
const ECHO_FIELDS = new Set([
  "frequency",
  "on_failure",
  "concurrency",
  "retry_delay",
  "weekday",
  "on_fail",
  "type",
  "level",
  "format",
  "output",
  "engine",
  "min_version",
  "time",
  "attach_logs",
  "provider",
  "timeout",
  "sla",
]);

export function schemaIssues(which: "svc" | "svcd", data: unknown): RawIssue[] {
  const { validate, schema } = VALIDATORS[which];
  if (validate(data)) return [];
  const out: RawIssue[] = [];
  const seen = new Set<string>();
  for (const err of validate.errors ?? []) {
    const issue = toIssue(err, schema, data);
    if (!issue) continue;
    const key = `${issue.path.join("\u0000")}\u0001${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(issue);
  }
  return out;
}

function toIssue(err: AjvError, root: JsonSchema, data: unknown): RawIssue | null {
  const base: string[] = fromPointer(err.instancePath);
  const node = schemaForInstance(root, base);

  switch (err.keyword) {
    case "propertyNames":
      return null; // the failing keyword inside propertyNames carries the name
    case "additionalProperties": {
      const field = String(err.params.additionalProperty);
      const allowed = Object.keys((node?.properties as Record<string, unknown> | undefined) ?? {});
      return { path: [...base, field], message: unknownFieldMessage(field, allowed) };
    }
    case "required": {
      const field = String(err.params.missingProperty);
      return { path: [...base, field], message: `missing required field "${field}"` };
    }
  }

  if (err.propertyName !== undefined) {
    const names = node?.propertyNames as JsonSchema | undefined;
    return { path: [...base, err.propertyName], message: xMessage(names) ?? `invalid name "${err.propertyName}"` };
  }

  const value = valueAt(data, base);
  const field = String(base[base.length - 1] ?? "");
  if (err.keyword === "type" && field === "time" && typeof value === "number") {
    return { path: base, message: timeAsNumberMessage(value) };
  }
  let message = xMessage(node) ?? friendly(err);
  if (
    (err.keyword === "enum" || err.keyword === "pattern") &&
    ECHO_FIELDS.has(field) &&
    (typeof value === "string" || typeof value === "number") &&
    String(value).length <= 80
  ) {
    message += ` (got ${JSON.stringify(value)})`;
  }
  return { path: base, message };
}

function xMessage(node: JsonSchema | undefined): string | null {
  return typeof node?.["x-message"] === "string" ? (node["x-message"] as string) : null;
}

/**
 * YAML reads an unquoted `time: 0230` as the number 230: the leading zero is
 * gone, so say how to write it.
 */
function timeAsNumberMessage(value: number): string {
  const digits = Number.isInteger(value) && value >= 0 && value <= 2359 ? String(value).padStart(4, "0") : null;
  const hint = digits ? `write time: "${digits}"` : 'like time: "0230"';
  return `must be a quoted string of 4 digits HHMM; YAML read the unquoted value as the number ${value}: quote it, ${hint}`;
}

function friendly(err: AjvError): string {
  const p = err.params;
  switch (err.keyword) {
    case "type": {
      const types = ([] as string[]).concat(p.type as string | string[]).filter((t) => t !== "null");
      return `must be ${types.map(typeWord).join(" or ")}`;
    }
    case "enum":
      return `must be one of ${(p.allowedValues as unknown[]).map(String).join(", ")}`;
    case "minLength":
      return p.limit === 1 ? "must not be empty" : `must be at least ${String(p.limit)} characters`;
    case "maxLength":
      return `must be at most ${String(p.limit)} characters`;
    case "minItems":
      return p.limit === 1 ? "must not be an empty list" : `must have at least ${String(p.limit)} items`;
    case "maxItems":
      return `must have at most ${String(p.limit)} items`;
    case "uniqueItems":
      return "must not contain duplicates";
    case "minimum":
      return `must be >= ${String(p.limit)}`;
    case "maximum":
      return `must be <= ${String(p.limit)}`;
    case "pattern":
      return "has an invalid format";
    default:
      return `is invalid (${err.keyword})`;
  }
}

function typeWord(t: string): string {
  switch (t) {
    case "object":
      return "a map";
    case "array":
      return "a list";
    case "string":
      return "a string";
    case "integer":
      return "an integer";
    case "number":
      return "a number";
    case "boolean":
      return "true or false";
    default:
      return t;
  }
}

export function unknownFieldMessage(field: string, allowed: readonly string[]): string {
  const guess = closest(field, allowed);
  if (guess) return `unknown field "${field}" (did you mean "${guess}"?)`;
  if (allowed.length > 0 && allowed.length <= 8) return `unknown field "${field}" (allowed: ${allowed.join(", ")})`;
  return `unknown field "${field}"`;
}

function valueAt(data: unknown, path: readonly string[]): unknown {
  let node = data;
  for (const seg of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[String(seg)];
  }
  return node;
}
