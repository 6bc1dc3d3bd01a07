import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderArtifacts, REPO_ROOT } from "./generate.js";

describe("generated schema artifacts", () => {
  it("match the schemas in src/config/schema (regenerate: npx tsx src/config/schema/generate.ts)", async () => {
    for (const a of await renderArtifacts()) {
      let committed: string;
      try {
        committed = readFileSync(join(REPO_ROOT, a.path), "utf8");
      } catch {
        committed = "";
      }
      expect(committed === a.content, `${a.path} is out of date: run npx tsx src/config/schema/generate.ts`).toBe(true);
    }
  });

  it("the shipped schemas are standalone JSON Schema documents", async () => {
    const svc = JSON.parse(readFileSync(join(REPO_ROOT, "schemas/svc.schema.json"), "utf8"));
    const svcd = JSON.parse(readFileSync(join(REPO_ROOT, "schemas/svcd.schema.json"), "utf8"));
    for (const s of [svc, svcd]) {
      expect(s.$schema).toBe("http://json-schema.org/draft-07/schema#");
    }
    expect(svc.$defs.job.required).toEqual(["command"]);
    expect(svcd.properties.scheduler.properties.max_concurrent_jobs.default).toBe(32);
  });
});
