import type { FastifyInstance, RouteOptions } from "fastify";
import { ERROR_CATALOGUE, errorResponseSchema } from "./errors.js";

/** One registered route as the OpenAPI document needs it. */
export interface RouteDoc {
  method: string;
  url: string;
  schema: RouteSchema;
  websocket: boolean;
}

export interface RouteSchema {
  summary?: string;
  description?: string;
  tags?: string[];
  params?: unknown;
  querystring?: unknown;
  body?: unknown;
  response?: Record<string | number, unknown>;
}

/** Collects every route as it is registered (an `onRoute` hook); add it before the routes. */
export function collectRoutes(app: FastifyInstance): RouteDoc[] {
  const docs: RouteDoc[] = [];
  app.addHook("onRoute", (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method === "HEAD") continue; // Fastify's automatic HEAD twins
      docs.push({
        method,
        url: route.url,
        schema: { ...((route.schema as RouteSchema | undefined) ?? {}) },
        websocket: (route as { websocket?: boolean }).websocket === true,
      });
    }
  });
  return docs;
}

interface Parameter {
  name: string;
  in: "path" | "query";
  required: boolean;
  schema: unknown;
  description?: string;
}

/** An OpenAPI 3.1 document (its schemas are JSON Schema 2020-12 compatible as written). */
export function openApiDocument(routes: readonly RouteDoc[], version: string): object {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of [...routes].sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method))) {
    const path = r.url.replace(/:([A-Za-z0-9_]+)/g, "{$1}").replace(/\*$/, "{path}");
    const op: Record<string, unknown> = {
      operationId: `${r.method.toLowerCase()} ${r.url}`,
      summary: r.schema.summary ?? `${r.method} ${r.url}`,
      ...(r.schema.description ? { description: r.schema.description } : {}),
      tags: r.schema.tags ?? [],
    };
    const params = [...parameters(r.schema.params, "path"), ...parameters(r.schema.querystring, "query")];
    if (r.url.endsWith("*")) params.push({ name: "path", in: "path", required: true, schema: { type: "string" } });
    if (params.length) op.parameters = params;
    if (r.schema.body) op.requestBody = { required: false, content: { "application/json": { schema: r.schema.body } } };
    op.responses = responses(r);
    (paths[path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "svc daemon API",
      version,
      description:
        "The local HTTP API of svcd (SPEC Endpoints, CONTRACT §4). Errors are `{error: {code, message, details?}}`; codes: " +
        Object.entries(ERROR_CATALOGUE)
          .map(([code, e]) => `${e.status} ${code}`)
          .join(", ") +
        ".",
    },
    paths,
    components: { schemas: { Error: errorResponseSchema } },
  };
}

function parameters(schema: unknown, where: "path" | "query"): Parameter[] {
  const s = schema as { properties?: Record<string, { description?: string }>; required?: string[] } | undefined;
  if (!s?.properties) return [];
  return Object.entries(s.properties).map(([name, def]) => ({
    name,
    in: where,
    required: where === "path" || (s.required ?? []).includes(name),
    schema: def,
    ...(def.description ? { description: def.description } : {}),
  }));
}

function responses(r: RouteDoc): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (r.websocket) {
    out["101"] = { description: "Switching protocols: the WebSocket log stream (see docs/API.md for the frames)" };
  }
  for (const [code, schema] of Object.entries(r.schema.response ?? {})) {
    const s = schema as { description?: string; content?: unknown };
    if (s.content) {
      out[code] = { description: s.description ?? describe(code), content: s.content };
    } else {
      out[code] = { description: s.description ?? describe(code), content: { "application/json": { schema } } };
    }
  }
  if (!Object.keys(out).some((c) => c.startsWith("4") || c.startsWith("5"))) {
    out.default = { description: "error", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
  }
  return out;
}

function describe(code: string): string {
  const n = Number(code);
  if (n >= 200 && n < 300) return "success";
  const e = Object.entries(ERROR_CATALOGUE).find(([, v]) => v.status === n);
  return e ? `${e[0]}: ${e[1].description}` : "response";
}

declare module "fastify" {
  interface FastifySchema {
    /** OpenAPI operation summary. */
    summary?: string;
    description?: string;
    tags?: readonly string[];
  }
}
