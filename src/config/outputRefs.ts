/**
 * The `{{ outputs.<job>.<var> }}` placeholder of svc.yaml (SPEC rule 7): its
 * grammar lives here, beside the rest of the file's syntax. The engine renders
 * placeholders at dispatch; the loader checks them at load.
 */

export interface OutputRef {
  job: string;
  varName: string;
  /** The placeholder text as written, e.g. "{{ outputs.extract.rows }}". */
  text: string;
}

// Job names may contain dots (CONTRACT §2), so the variable is the last segment.
export const OUTPUT_PLACEHOLDER = /\{\{\s*outputs\.([A-Za-z0-9][A-Za-z0-9_.-]*)\.([A-Za-z0-9_-]+)\s*\}\}/g;

export function findOutputRefs(text: string): OutputRef[] {
  const refs: OutputRef[] = [];
  for (const m of text.matchAll(OUTPUT_PLACEHOLDER)) {
    refs.push({ job: m[1] as string, varName: m[2] as string, text: m[0] });
  }
  return refs;
}
