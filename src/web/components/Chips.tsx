import type { ComponentChildren } from "preact";

export interface ChipOption<T> {
  value: T;
  label: ComponentChildren;
}

/**
 * A group of toggle buttons (`aria-pressed`), one of which is on: the
 * dashboard's way to pick among a few values (a window, a number of days,
 * a zone, a tag). `value` may match none of them (nothing is on).
 */
export function Chips<T>({ label, options, value, onPick }: { label: string; options: ChipOption<T>[]; value: T; onPick: (value: T) => void }) {
  return (
    <div class="chips" role="group" aria-label={label}>
      {options.map((o) => (
        <button key={String(o.value)} type="button" class={`chip${o.value === value ? " on" : ""}`} aria-pressed={o.value === value} onClick={() => onPick(o.value)}>
          {o.label}
        </button>
      ))}
    </div>
  );
}
