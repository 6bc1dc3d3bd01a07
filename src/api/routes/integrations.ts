import type { FastifyInstance } from "fastify";
import type { ApiDeps } from "../deps.js";
import { JOB_NAME_PATTERN } from "../schemas.js";

const integrationSchema = {
  type: "object",
  required: ["name", "provider", "credential_status", "last_test_result", "last_test_at"],
  properties: {
    name: { type: "string" },
    provider: { type: "string" },
    credential_status: { type: "string", enum: ["configured", "missing required fields", "env var unset"] },
    last_test_result: { type: ["string", "null"] },
    last_test_at: { type: ["string", "null"] },
  },
} as const;

export function integrationRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    "/api/integrations",
    {
      schema: {
        summary: "Integrations of svc.yaml with credential status and last test",
        tags: ["integrations"],
        response: {
          200: { type: "object", required: ["integrations"], properties: { integrations: { type: "array", items: integrationSchema } } },
        },
      },
    },
    async () => {
      const stored = new Map(deps.store.integrations.all().map((r) => [r.name, r]));
      const integrations = [...deps.project().integrations.values()]
        .map((i) => {
          const row = stored.get(i.name);
          return {
            name: i.name,
            provider: i.provider,
            credential_status: i.credentialStatus,
            last_test_result: row?.last_test_result ?? null,
            last_test_at: row?.last_test_at ?? null,
          };
        })
        .sort((a, b) => (a.name < b.name ? -1 : 1));
      return { integrations };
    },
  );

  app.post<{ Params: { name: string } }>(
    "/api/integrations/:name/test",
    {
      schema: {
        summary: "Send one real test delivery through the integration; answers the remote status and body",
        tags: ["integrations"],
        params: {
          type: "object",
          required: ["name"],
          properties: { name: { type: "string", pattern: JOB_NAME_PATTERN, description: "integration name" } },
        },
        response: {
          200: {
            type: "object",
            required: ["ok", "status", "response"],
            properties: {
              ok: { type: "boolean" },
              status: { type: ["integer", "null"], description: "remote HTTP status or SMTP reply code" },
              response: { description: "remote body (JSON when it is JSON) or SMTP reply text" },
              error: { type: ["string", "null"] },
            },
          },
        },
      },
    },
    async (request) => deps.notifier.testIntegration(request.params.name),
  );
}
