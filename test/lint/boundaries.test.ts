/**
 * The rule set itself (issue 19): each import rule of .dependency-cruiser.cjs fails on a
 * deliberately wrong import, a legal import passes, and `npm run lint` runs exactly this check.
 * The breaches are written into the real tree for the time of the test (the rules are about
 * paths) and removed afterwards.
 */
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = join(dirname(new URL(import.meta.url).pathname), "..", "..");
const tag = `zz-breach-${process.pid}`;
const written: string[] = [];

function write(rel: string, text: string): string {
  const path = join(ROOT, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  written.push(path);
  return rel;
}

afterAll(() => {
  for (const p of written) rmSync(p, { force: true });
});

/** [rule, file, its text] */
const BREACHES: [string, string, string][] = [
  ["schedule-graph-pure", `src/schedule/${tag}.ts`, `import { openStore } from "../store/index.js";\nexport const o = openStore;\n`],
  ["schedule-graph-no-io", `src/graph/${tag}.ts`, `import { readFileSync } from "node:fs";\nexport const r = readFileSync;\n`],
  ["sqlite-only-in-store", `src/api/${tag}-sqlite.ts`, `import Database from "better-sqlite3";\nexport const d = Database;\n`],
  ["api-cli-read-only-store", `src/cli/${tag}.ts`, `import { openStore } from "../store/store.js";\nexport const o = openStore;\n`],
  ["api-cli-no-engine-internals", `src/api/${tag}-engine.ts`, `import { Dispatcher } from "../engine/dispatcher.js";\nexport const d = Dispatcher;\n`],
  ["config-not-notify", `src/config/${tag}.ts`, `import { createNotifier } from "../notify/index.js";\nexport const n = createNotifier;\n`],
  ["test-support-only-in-tests", `src/engine/${tag}.ts`, `import { open } from "../store/testkit.js";\nexport const o = open;\n`],
  ["no-circular", `src/shared/${tag}-a.ts`, `import { b } from "./${tag}-b.js";\nexport const a = () => b;\n`],
];

interface Violation {
  rule: string;
  from: string;
}

/** Runs depcruise as `npm run lint` does (its default output, whose exit code fails the lint) on `files`. */
async function cruise(files: string[]): Promise<{ code: number; violations: Violation[] }> {
  const bin = join(ROOT, "node_modules", ".bin", "depcruise");
  let code = 0;
  let out: string;
  try {
    out = (await promisify(execFile)(bin, [...files, "--config", ".dependency-cruiser.cjs"], { cwd: ROOT, maxBuffer: 64 << 20 })).stdout;
  } catch (e) {
    const err = e as { code: number; stdout: string };
    code = err.code;
    out = err.stdout;
  }
  // "  error <rule>: <from> → <to>" (a cycle continues on the next lines)
  const violations = [...out.matchAll(/^\s*error ([\w-]+): (\S+)/gm)].map((m) => ({ rule: m[1]!, from: m[2]! }));
  return { code, violations };
}

describe("the import rules (npm run lint)", () => {
  it("npm run lint runs the rule set over src, test and bench", () => {
    const lint = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.lint as string;
    expect(lint).toContain("depcruise src test bench --config .dependency-cruiser.cjs");
  });

  it("fails on a wrong import of each kind, naming the rule and the file", async () => {
    const files = BREACHES.map(([, file, text]) => write(file, text));
    files.push(write(`src/shared/${tag}-b.ts`, `import { a } from "./${tag}-a.js";\nexport const b = () => a;\n`));
    const { code, violations } = await cruise(files);
    expect(code).not.toBe(0);
    for (const [rule, file] of BREACHES) {
      expect(violations.some((v) => v.rule === rule && v.from === file), `${rule} on ${file}`).toBe(true);
    }
    // Nothing but the breaches: the rest of the tree is clean.
    expect(violations.every((v) => v.from.includes(tag))).toBe(true);
  }, 60_000);

  it("passes a legal import (schedule/ may use config/types and pure libraries)", async () => {
    const ok = write(`src/schedule/${tag}-ok.ts`, `import type { ScheduleSpec } from "../config/types.js";\nimport { DateTime } from "luxon";\nexport const f = (s: ScheduleSpec) => [s, DateTime];\n`);
    const { code, violations } = await cruise([ok]);
    expect(violations).toEqual([]);
    expect(code).toBe(0);
  }, 60_000);
});
