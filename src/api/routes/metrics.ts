import type { FastifyInstance } from "fastify";
import type { ApiDeps } from "../deps.js";
import { notFound } from "../errors.js";

/**
 * `GET /metrics` (CONTRACT §7.4): the Prometheus text format, under
 * `api.base_path`, behind the same auth gate and RBAC as every other GET
 * (the built-in viewer role may read it). With `metrics.enabled: false` the
 * route answers 404 and nothing is collected.
 */
export function metricsRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    "/metrics",
    {
      schema: {
        summary: "Prometheus metrics (text exposition format 0.0.4); 404 when metrics.enabled is false",
        tags: ["observability"],
        response: { 200: { description: "Prometheus text format", content: { "text/plain": { schema: { type: "string" } } } } },
      },
    },
    async (_request, reply) => {
      const metrics = deps.metrics;
      if (metrics === null) throw notFound("metrics are off (metrics.enabled: false in svcd.yaml); set it to true and restart svcd");
      const text = await metrics.render();
      return reply.type(metrics.contentType).header("Cache-Control", "no-store").send(text);
    },
  );
}
