/**
 * The placeholders of `command` and `env` values in svc.yaml: its grammar
 * lives here, beside the rest of the file's syntax. The engine renders them
 * at dispatch; the loader checks them at load.
 *   {{ outputs.<job>.<var> }}   an upstream's output in this cycle (SPEC rule 7)
 *   {{ params.<name> }}         the run's parameter (CONTRACT §7.2)
 *   {{ run.scheduled_at }}      the run's slot, ISO UTC, empty for manual runs (CONTRACT §7.3)
 */

export interface OutputRef {
  job: string;
  varName: string;
  /** The placeholder text as written, e.g. "{{ outputs.extract.rows }}". */
  text: string;
}

// Job names may contain dots (CONTRACT §2), so the variable is the last segment.
export const OUTPUT_PLACEHOLDER = /\{\{\s*outputs\.([A-Za-z0-9][A-Za-z0-9_.-]*)\.([A-Za-z0-9_-]+)\s*\}\}/g;

/**
 * Any of the three, in one pass: groups 1-2 are an output's job and variable,
 * group 3 a param's name, group 4 a run field. Other `{{ ... }}` text is left as written.
 */
export const PLACEHOLDER =
  /\{\{\s*(?:outputs\.([A-Za-z0-9][A-Za-z0-9_.-]*)\.([A-Za-z0-9_-]+)|params\.([A-Za-z0-9_]+)|run\.(scheduled_at))\s*\}\}/g;

export interface ParamRef {
  name: string;
  text: string;
}

const PARAM_PLACEHOLDER = /\{\{\s*params\.([A-Za-z0-9_]+)\s*\}\}/g;

export function findParamRefs(text: string): ParamRef[] {
  return [...text.matchAll(PARAM_PLACEHOLDER)].map((m) => ({ name: m[1] as string, text: m[0] }));
}

export function findOutputRefs(text: string): OutputRef[] {
  const refs: OutputRef[] = [];
  for (const m of text.matchAll(OUTPUT_PLACEHOLDER)) {
    refs.push({ job: m[1] as string, varName: m[2] as string, text: m[0] });
  }
  return refs;
}
