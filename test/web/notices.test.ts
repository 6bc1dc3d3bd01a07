/** Notices (src/web/lib/notices.ts): their time, and held while the focus or the pointer is on them. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

// Loaded by a path TypeScript does not follow: this file is type-checked with Node's types, the module (through
// preact) with the DOM's.
type NoticesModule = {
  holdNotices(on: boolean): void;
  notify(kind: "ok" | "error" | "info", text: string): void;
  noticeStore: { get(): { text: string }[]; set(v: never[]): void };
};
const MODULE = "../../src/web/lib/notices.js";
const { holdNotices, notify, noticeStore } = (await import(MODULE)) as NoticesModule;

beforeEach(() => {
  vi.useFakeTimers();
  noticeStore.set([]);
});
afterEach(() => {
  holdNotices(false);
  vi.useRealTimers();
});

const texts = () => noticeStore.get().map((n) => n.text);

describe("notices", () => {
  it("go after 8 s (15 s for an error)", () => {
    notify("ok", "done");
    notify("error", "failed");
    vi.advanceTimersByTime(8_000);
    expect(texts()).toEqual(["failed"]);
    vi.advanceTimersByTime(7_000);
    expect(texts()).toEqual([]);
  });

  it("stay while held (a keyboard user on their link), and go once released", () => {
    notify("ok", "Run #12 started");
    holdNotices(true);
    vi.advanceTimersByTime(20_000);
    expect(texts()).toEqual(["Run #12 started"]);
    notify("ok", "another");
    holdNotices(false);
    expect(texts()).toEqual(["another"]); // its own time is not up yet
    vi.advanceTimersByTime(8_000);
    expect(texts()).toEqual([]);
  });
});
