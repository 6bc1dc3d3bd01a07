/**
 * The run form's pure parts (ParamFields.tsx): what the form starts with and the `params` it sends.
 */

/** A job's param declaration as GET /api/jobs/:name shows it (a secret default reads ***). */
export interface ParamDecl {
  type: "string" | "integer" | "number" | "boolean" | "enum";
  default: string | number | boolean | null;
  required: boolean;
  values: string[] | null;
  pattern: string | null;
  description: string | null;
  secret: boolean;
}

export type ParamInputs = Record<string, string | boolean>;

/**
 * What the form starts with: each default. A secret one stays empty (its value is not shown), a
 * secret boolean too: "" until it is ticked or unticked, and left out of the request until then,
 * so the daemon takes the default it knows.
 */
export function initialInputs(decls: Record<string, ParamDecl>, from?: Record<string, string | number | boolean | null>): ParamInputs {
  const out: ParamInputs = {};
  for (const [name, d] of Object.entries(decls)) {
    const start = from && name in from && !d.secret ? from[name] : d.default;
    if (d.type === "boolean") out[name] = d.secret && d.default !== null ? "" : start === true;
    else out[name] = start === null || start === undefined || d.secret ? "" : String(start);
  }
  return out;
}

/**
 * The `params` to send: typed by the declaration. An empty field is left out (the daemon then
 * takes the default, or says the param is required); text that is not a number is sent as it
 * is, and the daemon's message shows beside the field.
 */
export function paramsBody(decls: Record<string, ParamDecl>, inputs: ParamInputs): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [name, d] of Object.entries(decls)) {
    const v = inputs[name];
    if (d.type === "boolean") {
      if (v !== "") out[name] = v === true; // "": a secret default left as it is
      continue;
    }
    if (typeof v !== "string" || v === "") continue;
    if ((d.type === "integer" || d.type === "number") && v.trim() !== "" && Number.isFinite(Number(v))) out[name] = Number(v);
    else out[name] = v;
  }
  return out;
}
