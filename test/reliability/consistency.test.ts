/**
 * Read-your-writes across a run's end: when a run is seen finished (its
 * terminal status event, or the API), every line it printed is already
 * stored. Found by the 1 GB flood of resources.test.ts, which read a SUCCESS
 * run's line total 828 lines short: the last lines were still buffered.
 */
import { afterEach, describe, expect, it } from "vitest";
import { engineKit, type Kit } from "../helpers/engineKit.js";
import { isTerminal } from "../../src/store/runStatus.js";
import { pick, report } from "./helpers/relKit.js";

let kit: Kit | null = null;
afterEach(async () => {
  await kit?.close();
  kit = null;
});

describe("a finished run has all its lines", () => {
  it("at the terminal status event, the stored line total is final", { timeout: 120_000 }, async () => {
    const LINES = 4_321; // not a multiple of the store's 1,000-line batch
    const RUNS = pick(20, 200);
    kit = await engineKit(`jobs:\n  print:\n    command: "seq 1 ${LINES}"\n    concurrency: allow\n  fail:\n    command: "seq 1 ${LINES}; exit 3"\n    concurrency: allow\n`, {
      daemon: "executor:\n  pool_size: 4\n",
    });
    const k = kit;
    const short: string[] = [];
    let checked = 0;
    k.bus.on("run:status", ({ run }) => {
      if (!isTerminal(run.status)) return;
      checked++;
      const total = k.store.logs.forRun(run.id, { limit: 1, offset: 0 }).total;
      if (total !== LINES + 1) short.push(`run ${run.id} ${run.status}: ${total} of ${LINES + 1} lines stored`);
    });
    const ids = Array.from({ length: RUNS }, (_, i) => k.engine.runNow(i % 2 === 0 ? "print" : "fail", { triggeredBy: "cli" }).id);
    for (const id of ids) await k.waitRun(id, ["SUCCESS", "FAILED"], 60_000);
    expect(short).toEqual([]);
    expect(checked).toBe(RUNS);
    report("lines before the end", { runs: RUNS, lines_each: LINES + 1 });
  });
});
