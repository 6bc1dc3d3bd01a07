/**
 * describeUnless and the skip summary, through a real vitest run of
 * test/fixtures/skip/suite.fixture.ts: skipped tests carry their reason, a
 * skipped describe's own hooks do not run, the summary is one line, and
 * under CI=true a requirement CI must provide fails the file.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./daemonKit.js";

function vitest(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "node_modules", "vitest", "vitest.mjs"), "run", "--config", join(ROOT, "test", "fixtures", "skip", "vitest.config.ts")], {
      cwd: ROOT,
      env: { ...process.env, CI: "", NO_COLOR: "1", FORCE_COLOR: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    child.on("exit", (code) => resolve({ code, out }));
  });
}

describe("skips that say why", () => {
  it("skip every test of a describe with its reason, without its hooks, and end the run with one line", async () => {
    const r = await vitest({});
    expect(r.code).toBe(0);
    expect(r.out).not.toContain("the skipped suite's");
    expect(r.out).not.toContain("a skipped test ran");
    const summary = r.out.split("\n").filter((l) => l.startsWith("Skipped"));
    expect(summary).toEqual([
      "Skipped 5 of 6 tests: 2 needs a unicorn (apt-get install unicorn) [suite.fixture.ts]; 1 needs the CI image's tools [suite.fixture.ts]; 1 only on Tuesdays [suite.fixture.ts]; 1 no reason given [suite.fixture.ts]",
    ]);
  }, 60_000);

  it("under CI=true a requirement CI must provide fails the file, saying what is missing", async () => {
    const r = await vitest({ CI: "true" });
    expect(r.code).toBe(1);
    expect(r.out).toContain("a suite CI must run: needs the CI image's tools (CI=true: CI must run this suite, not skip it)");
  }, 60_000);
});
