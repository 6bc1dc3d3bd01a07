/**
 * One error family (STYLE, issue 19): every error class the daemon raises on purpose is a
 * SvcError with a catalogue code and its status, and the rule is checked over the sources, so a
 * new `class X extends Error` in the daemon's modules fails here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { SVC_ERROR_STATUS, SvcError } from "./svcError.js";

const SRC = new URL("..", import.meta.url).pathname;

/**
 * Error classes outside the family, each for a reason: the dashboard runs in the browser and
 * the `svc` client's CliError carries an exit code (CONTRACT §1), neither is ever thrown in the
 * daemon; fastYaml's Bail never leaves its module (it means "use the full parser").
 */
const OUTSIDE_THE_FAMILY = ["cli/output.ts: CliError", "config/fastYaml.ts: Bail", "web/lib/api.ts: ApiError"];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return d.name === "node_modules" || d.name === "dist" ? [] : sources(p);
    return /\.tsx?$/.test(d.name) && !/\.test\.tsx?$/.test(d.name) ? [p] : [];
  });
}

describe("the SvcError family", () => {
  it("gives every code its catalogue status", () => {
    for (const [code, status] of Object.entries(SVC_ERROR_STATUS)) {
      const e = new SvcError(code as keyof typeof SVC_ERROR_STATUS, "x");
      expect(e.status).toBe(status);
      expect(e.clientError).toBe(status < 500);
    }
  });

  it("holds every error class in src/ but the listed exceptions", () => {
    const found: string[] = [];
    for (const file of sources(SRC)) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/class\s+(\w+)\s+extends\s+(\w*Error)\b/g)) {
        if (m[2] === "SvcError" || m[1] === "SvcError") continue;
        found.push(`${relative(SRC, file)}: ${m[1]} extends ${m[2]}`);
      }
    }
    // Subclasses of a family member (EngineError extends SvcError, UsageError extends CliError) are fine:
    // only classes rooted in a built-in error count.
    const rooted = found.filter((f) => /extends (Error|RangeError|TypeError|SyntaxError)$/.test(f)).map((f) => f.replace(/ extends \w+$/, ""));
    expect(rooted.sort()).toEqual(OUTSIDE_THE_FAMILY);
  });
});
