/**
 * The WebSocket log stream against real runs: real subprocesses write lines
 * through the real store; real `ws` clients read them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WS_CLOSE_NOT_FOUND, WS_CLOSE_TOO_SLOW } from "./logStream.js";
import { apiKit, type ApiKit } from "./testkit.js";

/** 40 bursts of 10 lines, 20 ms apart: about a second of output, 400 lines. */
const COUNTER = `i=0
sleep 0.3
while [ $i -lt 40 ]; do
  j=0
  while [ $j -lt 10 ]; do echo "line $i.$j"; j=$((j+1)); done
  i=$((i+1))
  sleep 0.02
done`;

const YAML = `
jobs:
  counter:
    command: |
${COUNTER.split("\n").map((l) => `      ${l}`).join("\n")}
    concurrency: allow
  quick:
    command: echo a; echo b >&2
  retrier:
    retries: 1
    retry_delay: "fixed:300ms"
    command: |
      if [ -f marker ]; then echo "second attempt ok"; else touch marker; echo "first attempt fails"; exit 1; fi
  wide:
    command: |
      for i in $(seq 1 300); do head -c 60000 /dev/zero | tr '\\0' x; echo; done
      sleep 2
      echo live
      sleep 1
  flood:
    command: |
      sleep 0.5
      yes "a fairly long log line that fills socket buffers quickly 0123456789abcdef" | head -n 100000
`;

const COUNTER_LINES = 1 + 400; // "--- attempt 1 ---" + output

let k: ApiKit;
const baseline = { logs: 0, status: 0 };

beforeAll(async () => {
  k = await apiKit(YAML, { wsMaxBufferedBytes: 256 * 1024 });
  baseline.logs = k.listenerCount("run:logs");
  baseline.status = k.listenerCount("run:status");
});
afterAll(async () => {
  await k?.close();
});

function expectComplete(seqs: number[], total: number): void {
  expect(seqs.length).toBe(total);
  expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1));
}

async function noLeak(): Promise<void> {
  await k.waitFor("the log stream listeners to be released", () =>
    k.listenerCount("run:logs") === baseline.logs && k.listenerCount("run:status") === baseline.status,
  );
}

describe("the stream's ends", () => {
  it("an unknown run gets an error frame then close 4404", async () => {
    const c = k.logClient(999_999);
    const closed = await c.closed;
    expect(closed.code).toBe(WS_CLOSE_NOT_FOUND);
    expect(c.frames).toEqual([{ type: "error", message: "run 999999 not found" }]);
    await noLeak();
  });

  it("a run id that is not a positive integer is refused before the upgrade (HTTP 400)", async () => {
    for (const bad of ["abc", "0", "1.5"]) {
      const c = k.logClient(bad);
      const closed = await c.closed;
      expect(closed.code, bad).toBe(-400);
      expect(c.frames).toEqual([]);
    }
  });

  it("a finished run: all history, the end frame, close 1000", async () => {
    const id = await k.run("quick");
    await k.waitRun(id, ["SUCCESS"]);
    const c = k.logClient(id);
    const closed = await c.closed;
    expect(closed.code).toBe(1000);
    expect(c.frames).toEqual([
      { type: "line", seq: 1, ts: expect.any(String), stream: "stdout", line: "--- attempt 1 ---" },
      { type: "line", seq: 2, ts: expect.any(String), stream: "stdout", line: "a" },
      { type: "line", seq: 3, ts: expect.any(String), stream: "stderr", line: "b" },
      { type: "end", status: "SUCCESS" },
    ]);
  });
});

describe("no gap, no duplicate", () => {
  it("connected before the run writes: every line once, in order, then end", async () => {
    const id = await k.run("counter");
    const c = k.logClient(id);
    const closed = await c.closed;
    expect(closed.code).toBe(1000);
    expectComplete(c.seqs(), COUNTER_LINES);
    expect(c.frames.at(-1)).toEqual({ type: "end", status: "SUCCESS" });
    expect(c.lines().at(-1).line).toBe("line 39.9");
  });

  it("connected during the run: history then live, every line once, in order", async () => {
    const id = await k.run("counter");
    await k.waitFor("some lines to be stored", () => {
      k.store.logs.flush();
      return k.store.logs.forRun(id, { limit: 1, offset: 0 }).total >= 100;
    });
    const c = k.logClient(id);
    expect((await c.closed).code).toBe(1000);
    expectComplete(c.seqs(), COUNTER_LINES);
    expect(k.store.runs.get(id)!.status).toBe("SUCCESS");
  });

  it("20 concurrent clients on one run, joining at different moments, all get every line exactly once, in order", async () => {
    const id = await k.run("counter");
    const clients = [];
    for (let i = 0; i < 20; i++) {
      clients.push(k.logClient(id));
      await new Promise((r) => setTimeout(r, 60)); // spread over the run's ~1.5 s
    }
    const closes = await Promise.all(clients.map((c) => c.closed));
    expect(closes.map((c) => c.code)).toEqual(Array(20).fill(1000));
    for (const c of clients) {
      expectComplete(c.seqs(), COUNTER_LINES);
      expect(c.frames.at(-1)).toEqual({ type: "end", status: "SUCCESS" });
    }
    await noLeak();
  });

  it("a failed attempt that is retried does not end the stream: it follows the retry to the final status", async () => {
    const id = await k.run("retrier");
    const c = k.logClient(id);
    expect((await c.closed).code).toBe(1000);
    const lines = c.lines().map((f) => f.line);
    expect(lines).toEqual(["--- attempt 1 ---", "first attempt fails", "--- attempt 2 ---", "second attempt ok"]);
    expectComplete(c.seqs(), 4);
    expect(c.frames.filter((f) => f.type === "end")).toEqual([{ type: "end", status: "SUCCESS" }]);
  });
});

describe("misbehaving clients", () => {
  it("a client that disconnects mid-stream is cleaned up; the daemon keeps serving", async () => {
    const id = await k.run("counter");
    const c = k.logClient(id);
    await k.waitFor("50 lines to arrive", () => c.lines().length >= 50);
    c.socket.terminate();
    await noLeak();
    expect((await k.get("/api/status")).status).toBe(200);
    const again = k.logClient(id);
    expect((await again.closed).code).toBe(1000);
    expectComplete(again.seqs(), COUNTER_LINES);
    await noLeak();
  });

  it("a client that stops reading is closed with 4429 at the buffer limit, without holding the run back", async () => {
    const id = await k.run("flood");
    const c = k.logClient(id);
    await c.opened;
    // Stop reading: the kernel buffers fill, then the daemon's unsent bytes grow.
    const raw = (c.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    raw.pause();
    await noLeak(); // the stream gave up on this client
    const run = await k.waitRun(id, ["SUCCESS"], 30_000);
    expect(run.status).toBe("SUCCESS");
    raw.resume();
    const closed = await c.closed;
    expect(closed.code).toBe(WS_CLOSE_TOO_SLOW);
    expect(closed.reason).toMatch(/too slow/);
    // it got a clean prefix before it was dropped
    const seqs = c.seqs();
    expect(seqs.length).toBeGreaterThan(0);
    expect(seqs.length).toBeLessThan(100_001);
    expectComplete(seqs, seqs.length);
    expect(c.frames.some((f) => f.type === "end")).toBe(false);
  });

  it("a client that stops answering pings (half-open connection) is cut; one that answers stays", async () => {
    const h = await apiKit("jobs:\n  slow:\n    command: sleep 30\n", { wsHeartbeatMs: 1_000 });
    try {
      const id = await h.run("slow");
      const silent = h.logClient(id, { autoPong: false });
      const healthy = h.logClient(id);
      await Promise.all([silent.opened, healthy.opened]);
      const closed = await silent.closed;
      expect(closed.code).toBe(1006); // terminated, no close frame
      await new Promise((r) => setTimeout(r, 2_500)); // more heartbeats, each answered
      expect(healthy.socket.readyState).toBe(healthy.socket.OPEN);
      await h.post("/api/jobs/slow/cancel");
      expect((await healthy.closed).code).toBe(1000);
      expect(healthy.frames.at(-1)).toEqual({ type: "end", status: "FAILED" });
    } finally {
      await h.close();
    }
  });

  it("a history of wide lines is sent as the client takes it: a reader that pauses is not cut at the first live line", async () => {
    // 300 lines of 60 KB (18 MB, one page: more than the kernel's socket buffers take) against a 256 KiB
    // limit; the client takes nothing for 3 s meanwhile.
    const run = await k.post("/api/jobs/wide/run");
    const id = run.body.run_id as number;
    await k.waitFor("the wide lines stored", () => k.store.logs.forRun(id, { afterSeq: 0, limit: 1000, offset: 0 }).lines.length >= 301, 15_000);
    const c = k.logClient(id);
    await c.opened;
    const raw = (c.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    raw.pause();
    await new Promise((r) => setTimeout(r, 3_000)); // "live" is written meanwhile
    raw.resume();
    expect((await c.closed).code).toBe(1000);
    expectComplete(c.seqs(), 302);
    expect(c.lines().at(-1)!.line).toBe("live");
    await noLeak();
  }, 30_000);

  it("a reader of a long history is paced by the socket, not dropped, and gets every line", async () => {
    const id = k.store.runs.recent("flood", 1)[0]!.id;
    const total = 100_001;
    const c = k.logClient(id);
    expect((await c.closed).code).toBe(1000);
    expectComplete(c.seqs(), total);
    expect(c.frames.at(-1)).toEqual({ type: "end", status: "SUCCESS" });
    await noLeak();
  }, 60_000);
});
