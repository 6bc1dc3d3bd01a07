/**
 * A vitest reporter (vitest.config.ts) that ends every run with one line:
 * how many tests were skipped, grouped by reason (the note of `ctx.skip`,
 * see test/helpers/skip.ts), with the files they are in. A skip without a
 * reason is listed as "no reason given".
 */
import { basename } from "node:path";
import type { Reporter, TestModule, Vitest } from "vitest/node";

const NO_REASON = "no reason given";

export default class SkipSummary implements Reporter {
  private vitest: Vitest | null = null;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  async onTestRunEnd(modules: ReadonlyArray<TestModule>): Promise<void> {
    // Reporters end together: one turn later, the line comes after the default reporter's summary.
    await new Promise((r) => setImmediate(r));
    const byReason = new Map<string, { count: number; files: Set<string> }>();
    let total = 0;
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        total++;
        const r = t.result();
        if (r.state !== "skipped") continue;
        // Left out by -t (a name filter) is not a skip of the suite.
        const filter = this.vitest?.config.testNamePattern;
        if (r.note === undefined && filter && !filter.test(t.fullName)) {
          total--;
          continue;
        }
        const reason = r.note ?? (t.options.mode === "todo" ? "todo" : NO_REASON);
        const entry = byReason.get(reason) ?? { count: 0, files: new Set<string>() };
        entry.count++;
        entry.files.add(basename(m.moduleId));
        byReason.set(reason, entry);
      }
    }
    const skipped = [...byReason.values()].reduce((a, e) => a + e.count, 0);
    const parts = [...byReason.entries()]
      .sort((a, b) => b[1].count - a[1].count)
      .map(([reason, e]) => `${e.count} ${reason} [${[...e.files].sort().join(", ")}]`);
    const line = skipped === 0 ? `Skipped: none of ${total} tests` : `Skipped ${skipped} of ${total} tests: ${parts.join("; ")}`;
    (this.vitest?.logger ?? console).log(line);
  }
}
