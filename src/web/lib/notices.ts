import { createStore } from "./store.js";

/** Short-lived messages after an action ("Run #12 started"), announced politely to screen readers. */
export interface Notice {
  id: number;
  kind: "ok" | "error" | "info";
  text: string;
  link?: { href: string; label: string };
}

export const noticeStore = createStore<Notice[]>([]);
let nextId = 1;

/** Notices whose time is up but that hold the keyboard focus or the pointer: they go when it leaves. */
let held = false;
const expired = new Set<number>();

export function notify(kind: Notice["kind"], text: string, link?: Notice["link"]): void {
  const notice: Notice = { id: nextId++, kind, text, ...(link ? { link } : {}) };
  noticeStore.set([...noticeStore.get(), notice].slice(-4));
  setTimeout(() => expire(notice.id), kind === "error" ? 15_000 : 8_000);
}

function expire(id: number): void {
  if (held) expired.add(id);
  else dismissNotice(id);
}

/**
 * While the focus (a keyboard user on "Open run #N" or Dismiss) or the pointer is on the notices, none goes:
 * removing the focused one would drop the focus to the page's start. Those whose time passed meanwhile go after.
 */
export function holdNotices(on: boolean): void {
  held = on;
  if (on) return;
  for (const id of expired) dismissNotice(id);
  expired.clear();
}

export function dismissNotice(id: number): void {
  noticeStore.set(noticeStore.get().filter((n) => n.id !== id));
}
