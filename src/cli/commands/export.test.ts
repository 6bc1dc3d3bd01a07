import { describe, expect, it } from "vitest";
import type { RunRecord } from "../client/types.js";
import { writeDocument } from "./export.js";

const run = (id: number) => ({ id, job_name: "a", status: "SUCCESS", params: { day: "2026-11-01" }, error: null }) as unknown as RunRecord;

async function written(doc: Record<string, unknown> & { runs: RunRecord[] }, logs: boolean): Promise<string> {
  let text = "";
  await writeDocument((t) => (text += t), doc, logs ? async (id) => [{ seq: 1, line: `line of ${id}` }] : null);
  return text;
}

describe("svc export's document, written piece by piece", () => {
  it("is exactly JSON.stringify(doc, null, 2): lists element by element, empty ones, nested values", async () => {
    const doc = { format: "svc-export", format_version: 1, daemon: { version: "x", nested: { a: [1, 2] } }, jobs: [], runs: [run(1), run(2)], outputs: [{ id: 3 }], empty: {} };
    expect(await written(doc, false)).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    expect(await written({ runs: [] }, false)).toBe(`${JSON.stringify({ runs: [] }, null, 2)}\n`);
  });

  it("no piece holds more than one run (a million runs would pass V8's longest string as one)", async () => {
    const doc = { format: "svc-export", runs: Array.from({ length: 1000 }, (_, i) => run(i + 1)) };
    const pieces: string[] = [];
    await writeDocument((t) => pieces.push(t), doc, async () => []);
    const one = JSON.stringify(run(1000), null, 2).length + 20;
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(one + 200);
    expect(JSON.parse(pieces.join("")).runs).toHaveLength(1000);
  });

  it("with logs: run_logs last, one {run_id, lines} per run in the runs' order", async () => {
    const doc = { format: "svc-export", runs: [run(1), run(5)] };
    const expected = { ...doc, run_logs: [1, 5].map((id) => ({ run_id: id, lines: [{ seq: 1, line: `line of ${id}` }] })) };
    expect(await written(doc, true)).toBe(`${JSON.stringify(expected, null, 2)}\n`);
    expect(await written({ runs: [] }, true)).toBe(`${JSON.stringify({ runs: [], run_logs: [] }, null, 2)}\n`);
  });
});
