import type { ComponentChildren } from "preact";

/** A definition list of label/value pairs; values may be any element. */
export function KeyValues({ items }: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="kv">
      {items.map(([k, v]) => (
        <div key={k} class="kv-item">
          <dt>{k}</dt>
          <dd>{v === null || v === undefined || v === "" ? <span class="muted">—</span> : v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Any JSON value, pretty-printed. */
export function JsonBlock({ value, label }: { value: unknown; label?: string }) {
  return (
    <pre class="json" aria-label={label} tabIndex={0}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}
