/**
 * A dispatch pass reads the waiting runs' rows it needs (issue 24, the cost of one run): when an
 * end frees one pool slot while many triggered runs wait, the pass's first query asks for about
 * what the free slots can take, not 64 rows for one start. FIFO order and every run's end hold.
 */
import { describe, expect, it } from "vitest";
import { engineKits } from "../helpers/engineKit.js";

const startKit = engineKits();

describe("a dispatch pass with many waiting runs", () => {
  it("reads at most 8 waiting rows a query with pool_size 2, and starts all 40 runs in FIFO order", async () => {
    const kit = await startKit(`jobs:\n  w:\n    command: "sleep 0.05"\n    concurrency: allow\n`, { daemon: "executor:\n  pool_size: 2\n" });
    const asked: number[] = [];
    const getMany = kit.store.runs.getMany.bind(kit.store.runs);
    kit.store.runs.getMany = (ids) => {
      asked.push(ids.length);
      return getMany(ids);
    };
    const ids = Array.from({ length: 40 }, () => kit.engine.runNow("w", { triggeredBy: "cli" }).id);
    await kit.waitFor("40 runs to end", () => kit.runsOf("w").every((r) => r.status === "SUCCESS"), 30_000);
    const started = kit.runsOf("w").sort((a, b) => a.started_at!.localeCompare(b.started_at!) || a.id - b.id);
    expect(started.map((r) => r.id)).toEqual(ids);
    expect(asked.length).toBeGreaterThan(0);
    expect(Math.max(...asked)).toBeLessThanOrEqual(8);
  });
});
