/**
 * docs/ARCHITECTURE.md "Where each rule lives": every file and test it names exists, so the
 * table cannot quietly point at code that moved.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(new URL("../..", import.meta.url).pathname);
const doc = readFileSync(join(ROOT, "docs", "ARCHITECTURE.md"), "utf8");
const table = doc.slice(doc.indexOf("## Where each rule lives"));
const rows = table.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| rule") && !l.startsWith("|---"));
const paths = [...new Set(rows.flatMap((r) => [...r.matchAll(/`([^`\s]+\/[^`\s]*)`/g)].map((m) => m[1]!)))];

describe("the architecture rule table", () => {
  it("has a row for each rule, each with its implementation and its test", () => {
    expect(rows.length).toBeGreaterThanOrEqual(25);
    for (const r of rows) {
      const [, impl, proof] = r.slice(2, -2).split(" | ").map((c) => c.trim());
      expect(impl, r).toMatch(/`[^`]+`/);
      expect(proof, r).toMatch(/\.test\.ts`/);
    }
  });

  it.each(paths)("names an existing path: %s", (p) => {
    expect(existsSync(join(ROOT, p))).toBe(true);
  });
});
