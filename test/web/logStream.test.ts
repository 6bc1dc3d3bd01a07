/**
 * The dashboard's log follower (src/web/lib/logStream.ts) with its seams
 * replaced: `request` (the REST calls), the token, and the browser's
 * WebSocket, on fake timers. What it must do when the WebSocket cannot be
 * used or the daemon goes away for a while.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const calls = vi.hoisted(() => ({ request: vi.fn(), token: { value: null as string | null } }));
vi.mock("../../src/web/lib/api.js", () => ({ request: calls.request, seg: (s: string | number) => encodeURIComponent(String(s)) }));
vi.mock("../../src/web/lib/auth.js", () => ({ getToken: () => calls.token.value }));
vi.mock("../../src/web/lib/base.js", () => ({ wsUrl: (p: string) => `ws://svc.test/${p}` }));

// Loaded by a path TypeScript does not follow: this file is type-checked with Node's types, the module with the DOM's.
type Follow = (runId: number, h: { onLines(l: { seq: number }[]): void; onEnd(s: string): void; onState(s: unknown): void }) => () => void;
const MODULE = "../../src/web/lib/logStream.js";
const { followLogs } = (await import(MODULE)) as { followLogs: Follow };

/** A browser WebSocket stand-in: constructed sockets are kept; a token with "/" cannot be a subprotocol. */
class FakeSocket {
  static made: FakeSocket[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((ev: { data: string }) => void) | null = null;
  onclose: ((ev: { code: number }) => void) | null = null;
  constructor(
    readonly url: string,
    protocols?: string[],
  ) {
    if (protocols?.some((p) => /[/=]/.test(p))) throw new SyntaxError("The subprotocol is invalid");
    FakeSocket.made.push(this);
  }
  close(): void {}
}

const line = (seq: number) => ({ seq, ts: "2027-01-10T10:00:00.000Z", stream: "stdout", line: `line ${seq}` });

function follow() {
  const got = { lines: [] as number[], ended: null as string | null, states: [] as unknown[] };
  const stop = followLogs(7, {
    onLines: (ls) => got.lines.push(...ls.map((l) => l.seq)),
    onEnd: (s) => (got.ended = s),
    onState: (s) => got.states.push(s),
  });
  return { got, stop };
}

beforeEach(() => {
  vi.useFakeTimers();
  FakeSocket.made = [];
  vi.stubGlobal("WebSocket", FakeSocket);
  calls.request.mockReset();
  calls.token.value = null;
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe("followLogs", () => {
  it("without a WebSocket (a token with / or =) it follows the stored lines over REST until the run ends", async () => {
    calls.token.value = "q1w2e3/t5y6+u7i8o9==";
    let stored = [line(1), line(2)];
    let status = "RUNNING";
    calls.request.mockImplementation(async (_m: string, path: string) => {
      if (path.includes("/logs?")) return { lines: stored.filter((l) => l.seq > Number(/offset=(\d+)/.exec(path)![1])) };
      return { status };
    });
    const { got, stop } = follow();
    await vi.advanceTimersByTimeAsync(100);
    expect(got.lines).toEqual([1, 2]);
    expect(got.ended).toBeNull();
    stored = [line(1), line(2), line(3)];
    status = "SUCCESS";
    await vi.advanceTimersByTimeAsync(2_100);
    expect(got.lines).toEqual([1, 2, 3]);
    expect(got.ended).toBe("SUCCESS");
    stop();
  });

  it("a daemon that cannot be reached when the stream drops (restarting) is tried again until it answers", async () => {
    let up = false;
    calls.request.mockImplementation(async () => {
      if (!up) throw new Error("Cannot reach the daemon");
      return { status: "RUNNING" };
    });
    const { got, stop } = follow();
    expect(FakeSocket.made).toHaveLength(1);
    FakeSocket.made[0]!.onclose!({ code: 1006 });
    await vi.advanceTimersByTimeAsync(1_100); // the first retry: the daemon is down
    expect(got.states).toContainEqual({ error: "Cannot reach the daemon" });
    await vi.advanceTimersByTimeAsync(15_000);
    expect(FakeSocket.made).toHaveLength(1);
    up = true;
    await vi.advanceTimersByTimeAsync(5_100);
    expect(FakeSocket.made).toHaveLength(2); // connected again
    stop();
  });
});
