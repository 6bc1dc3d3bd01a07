/**
 * fastYaml is proven equal to one exact `yaml` version (fastYaml.test.ts): package.json must pin
 * that version exactly, and it must be the one installed (src/config/README.md).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

describe("the yaml pin", () => {
  it("is an exact version, and the installed one", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    const pin: string = pkg.dependencies.yaml;
    expect(pin).toMatch(/^\d+\.\d+\.\d+$/);
    const installed = createRequire(import.meta.url)("yaml/package.json").version;
    expect(installed).toBe(pin);
  });
});
