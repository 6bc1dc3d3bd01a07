import { useEffect, useRef, useState } from "preact/hooks";

/** Above this many rows only the ones near the viewport are in the DOM. */
export const WINDOW_THRESHOLD = 150;
const OVERSCAN = 20;
const FALLBACK_ROW_PX = 52;

export interface RowWindow {
  start: number;
  end: number;
  /** Heights of the spacer rows that stand in for the rows not rendered. */
  padTop: number;
  padBottom: number;
  windowed: boolean;
}

/**
 * Windowing for long tables that scroll with the page (the overview with
 * 1,000 jobs): style and layout of 25,000 cells cost seconds on a slow
 * laptop, a window of ~60 rows a few milliseconds. Rows must have a uniform
 * height (CSS); it is measured from the first rendered row. Focus moving
 * down with Tab scrolls rows into view, which moves the window along.
 */
export function useWindowedRows(count: number, body: { current: HTMLTableSectionElement | null }): RowWindow {
  const windowed = count > WINDOW_THRESHOLD;
  const rowPx = useRef(FALLBACK_ROW_PX);
  const [range, setRange] = useState({ start: 0, end: Math.min(count, 60) });

  useEffect(() => {
    if (!windowed) return;
    let frame = 0;
    const update = () => {
      frame = 0;
      const el = body.current;
      if (!el) return;
      const sample = el.querySelector<HTMLElement>("tr[data-row]");
      if (sample && sample.offsetHeight > 0) rowPx.current = sample.offsetHeight;
      const top = el.getBoundingClientRect().top;
      const first = Math.floor(Math.max(0, -top) / rowPx.current);
      const visible = Math.ceil(window.innerHeight / rowPx.current);
      const start = Math.max(0, first - OVERSCAN);
      const end = Math.min(count, first + visible + OVERSCAN);
      setRange((r) => (r.start === start && r.end === end ? r : { start, end }));
    };
    const schedule = () => {
      frame ||= requestAnimationFrame(update);
    };
    update();
    window.addEventListener("scroll", schedule, { passive: true });
    window.addEventListener("resize", schedule);
    return () => {
      cancelAnimationFrame(frame);
      window.removeEventListener("scroll", schedule);
      window.removeEventListener("resize", schedule);
    };
  }, [count, windowed]);

  if (!windowed) return { start: 0, end: count, padTop: 0, padBottom: 0, windowed };
  const start = Math.min(range.start, count);
  const end = Math.min(Math.max(range.end, start), count);
  return { start, end, padTop: start * rowPx.current, padBottom: (count - end) * rowPx.current, windowed };
}
