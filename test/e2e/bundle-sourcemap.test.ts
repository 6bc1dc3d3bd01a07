/**
 * The daemon's one-file bundle ships a source map (scripts/bundle-svcd.mjs): a position in
 * dist/bundle/svcd.mjs, which is what a stack trace from a user's svcd names, maps back to the
 * TypeScript source, and Node uses it with --enable-source-maps. Needs `npm run build:ts`.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(new URL("../..", import.meta.url).pathname);
const BUNDLE = join(ROOT, "dist", "bundle", "svcd.mjs");

describe("the svcd bundle's source map", () => {
  it("maps a position in the bundle to its line in src/, with the source text", () => {
    const code = readFileSync(BUNDLE, "utf8");
    expect(code.trimEnd().endsWith("//# sourceMappingURL=svcd.mjs.map")).toBe(true);
    const map = new SourceMap(JSON.parse(readFileSync(`${BUNDLE}.map`, "utf8")));
    const text = "while svcd was running: ";
    const at = code.indexOf(text);
    expect(at).toBeGreaterThan(0);
    const line = code.slice(0, at).split("\n").length - 1;
    const column = at - (code.lastIndexOf("\n", at) + 1);
    const entry = map.findEntry(line, column) as { originalSource: string; originalLine: number };
    expect(entry.originalSource).toMatch(/src\/daemon\/dataDirWatch\.ts$/);
    const source = readFileSync(join(ROOT, "src", "daemon", "dataDirWatch.ts"), "utf8").split("\n");
    expect(source[entry.originalLine]).toContain("while svcd was running");
  });

  it("is what Node uses for a stack trace under --enable-source-maps", () => {
    // An error thrown from inside the bundle: main() of a command that fails with a stack (a bad argument type).
    const script = `import(${JSON.stringify(BUNDLE)}).then((m) => { try { m.packageVersion.call(null); m.buildProgram(null); } catch (e) { console.log(e.stack); } });`;
    const r = spawnSync(process.execPath, ["--enable-source-maps", "--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
    expect(r.stdout).toMatch(/src\/cli\/main\.ts:\d+:\d+/);
  });
});
