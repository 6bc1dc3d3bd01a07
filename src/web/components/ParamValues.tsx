import type { RunRecord } from "../lib/types.js";

/** A run's params as `name=value` chips (secret ones arrive as *** from the daemon); nothing when it has none. */
export function ParamValues({ params }: { params: RunRecord["params"] | null | undefined }) {
  const entries = Object.entries(params ?? {});
  if (entries.length === 0) return null;
  return (
    <span class="param-values" data-run-params>
      {entries.map(([k, v]) => (
        <code key={k} title={`param ${k}`}>
          {k}={typeof v === "string" ? v : JSON.stringify(v)}
        </code>
      ))}
    </span>
  );
}

export const hasParams = (r: RunRecord) => Object.keys(r.params ?? {}).length > 0;
