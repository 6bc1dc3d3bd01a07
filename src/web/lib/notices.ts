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

export function notify(kind: Notice["kind"], text: string, link?: Notice["link"]): void {
  const notice: Notice = { id: nextId++, kind, text, ...(link ? { link } : {}) };
  noticeStore.set([...noticeStore.get(), notice].slice(-4));
  setTimeout(() => dismissNotice(notice.id), kind === "error" ? 15_000 : 8_000);
}

export function dismissNotice(id: number): void {
  noticeStore.set(noticeStore.get().filter((n) => n.id !== id));
}
