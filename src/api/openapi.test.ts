/**
 * GET /api/openapi.json lists every route of SPEC "Endpoints" (plus the
 * documented additions) with its parameters and responses, and docs/API.md
 * has a section for each.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKit, type ApiKit, type Json } from "./testkit.js";

/** SPEC's tables (Status and jobs, Runs and logs, Observability, Daemon control, Config and database) + additions. */
const EXPECTED = [
  "GET /api/status",
  "GET /api/jobs",
  "GET /api/jobs/{name}",
  "POST /api/jobs/{name}/run",
  "POST /api/jobs/{name}/cancel",
  "POST /api/jobs/{name}/pause",
  "POST /api/jobs/{name}/resume",
  "POST /api/jobs/{name}/retry",
  "POST /api/jobs/{name}/skip",
  "POST /api/jobs/{name}/backfill",
  "GET /api/backfills",
  "GET /api/backfills/{id}",
  "POST /api/backfills/{id}/cancel",
  "POST /api/jobs/pause",
  "POST /api/jobs/resume",
  "POST /api/jobs/run",
  "GET /api/cycles/{id}",
  "GET /api/jobs/{name}/why",
  "GET /api/db/non_runs",
  "GET /api/runs/{id}",
  "GET /api/runs/{id}/logs",
  "GET /api/runs/{id}/outputs",
  "GET /ws/logs/{run_id}",
  "GET /api/timeline",
  "GET /api/timeline/changes",
  "GET /api/upcoming",
  "GET /api/audit",
  "GET /api/tags",
  "GET /api/dag",
  "POST /api/daemon/stop",
  "POST /api/daemon/reload",
  "GET /api/daemon/info",
  "GET /api/config",
  "GET /api/config/daemon",
  "GET /api/config/source",
  "POST /api/config/validate",
  "POST /api/config/save",
  "GET /api/db/job_runs",
  "GET /api/db/job_state",
  "POST /api/db/job_state/{job}/clear_lock",
  "GET /api/db/run_logs",
  "GET /api/db/run_outputs",
  "GET /api/db/alerts",
  "POST /api/db/alerts/{id}/retry",
  "GET /api/db/state",
  "GET /api/integrations",
  "POST /api/integrations/{name}/test",
  "GET /",
  "GET /api/openapi.json",
  "GET /metrics",
  "POST /api/db/backup",
];

let k: ApiKit;
let doc: Json;
beforeAll(async () => {
  k = await apiKit("jobs:\n  hello:\n    command: echo hi\n");
  doc = (await k.get("/api/openapi.json")).body;
});
afterAll(async () => {
  await k?.close();
});

const operations = () =>
  Object.entries<Record<string, Json>>(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([m, op]) => ({ key: `${m.toUpperCase()} ${path}`, op })));

describe("GET /api/openapi.json", () => {
  it("is an OpenAPI 3.1 document with the package version", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info).toMatchObject({ title: "svc daemon API", version: "0.1.0-test" });
  });

  it("lists every route of SPEC and nothing undocumented", () => {
    const listed = operations().map((o) => o.key).filter((key) => !key.startsWith("GET /assets/"));
    expect([...listed].sort()).toEqual([...EXPECTED].sort());
  });

  it("gives every operation a summary, its path parameters and a success response", () => {
    for (const { key, op } of operations()) {
      expect(op.summary, key).toMatch(/\w/);
      const names = [...key.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const pathParams = (op.parameters ?? []).filter((p: { in: string }) => p.in === "path").map((p: { name: string }) => p.name);
      expect(pathParams.sort(), key).toEqual(names.sort());
      expect(Object.keys(op.responses).some((c) => /^(101|2\d\d)$/.test(c)), key).toBe(true);
    }
  });

  it("documents query parameters with their types, ranges and enums", () => {
    const params = (key: string) => {
      const [method, path] = key.split(" ");
      return Object.fromEntries(doc.paths[path!][method!.toLowerCase()].parameters.map((p: { name: string; schema: unknown }) => [p.name, p.schema]));
    };
    expect(params("GET /api/db/job_runs")).toMatchObject({
      page_size: { enum: [25, 50, 100], default: 50 },
      status: { enum: ["PENDING", "RUNNING", "SUCCESS", "FAILED", "RETRYING", "SKIPPED"] },
      cycle_id: { type: "string" },
    });
    expect(params("GET /api/jobs/{name}")).toMatchObject({ name: { pattern: expect.any(String) }, runs: { maximum: 500, default: 20 } });
    expect(params("GET /api/runs/{id}/logs")).toMatchObject({ limit: { maximum: 10000, default: 1000 }, stream: { enum: ["stdout", "stderr", "healthcheck"] } });
    expect(doc.paths["/api/jobs/{name}/run"].post.requestBody.content["application/json"].schema.properties.reason).toMatchObject({ maxLength: 500 });
    expect(doc.paths["/api/jobs/{name}/run"].post.responses["202"]).toBeDefined();
  });

  it("has a section with a curl example in docs/API.md for every operation", () => {
    const md = readFileSync(new URL("../../docs/API.md", import.meta.url), "utf8");
    const sections = md.split(/\n(?=###? )/);
    for (const { key } of operations()) {
      if (key.startsWith("GET /assets/")) continue;
      const [method, path] = key.split(" ");
      const mdPath = path!.replace(/\{(\w+)\}/g, ":$1");
      const section = sections.find((s) => new RegExp(`^### .*\\b${method} ${mdPath.replace(/[.*?/]/g, "\\$&")}(\\s|,|$)`).test(s) || (method === "GET" && s.startsWith(`### WebSocket ${mdPath}`)));
      expect(section, `docs/API.md section for ${key}`).toBeDefined();
      expect(section, key).toMatch(/```sh\n(curl|npx wscat)/);
    }
  });
});
