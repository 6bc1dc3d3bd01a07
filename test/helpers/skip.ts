/**
 * Skips that say why. Every skip in the suite goes through `ctx.skip(cond,
 * reason)` in a test or through `describeUnless` for a whole describe, so
 * that each skipped test carries its reason as the note that the run's
 * summary line prints (test/helpers/skipSummary.ts). A bare `it.skip`,
 * `skipIf` or `runIf` has no note: the summary lists it as "no reason given".
 */
import { beforeEach, describe } from "vitest";
import { getCurrentSuite } from "vitest/suite";

/** True when `CI` is set to anything but "" / "0" / "false" (.ci/run exports CI=true). */
export const IN_CI = !["", "0", "false"].includes((process.env.CI ?? "").toLowerCase());

export interface Requirement {
  /** Why the tests cannot run here, and how to make them run; null when they can. */
  missing: string | null;
  /** CI must provide it: under CI=true a missing requirement fails the file instead of skipping it. */
  requiredInCI?: boolean;
}

/**
 * `describe(name, fn)` when the requirement is met. Otherwise every test of
 * the describe is reported skipped with the requirement's reason as its
 * note, and the describe's own hooks (a browser launch, a daemon start) are
 * not run; hooks of describes nested inside it still are. Under CI=true a
 * requirement CI must provide throws instead, which fails the file.
 */
export function describeUnless(req: Requirement, name: string, fn: () => void): void {
  const { missing } = req;
  if (missing === null) {
    describe(name, fn);
    return;
  }
  if (req.requiredInCI && IN_CI) throw new Error(`${name}: ${missing} (CI=true: CI must run this suite, not skip it)`);
  describe(name, () => {
    // Hooks register through the collector's `on`: drop the describe's own while its body runs.
    const collector = getCurrentSuite();
    const on = collector.on;
    collector.on = () => {};
    try {
      fn();
    } finally {
      collector.on = on;
    }
    beforeEach((ctx) => ctx.skip(missing));
  });
}
