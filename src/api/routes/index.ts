import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { dashboardRoutes } from "../dashboard.js";
import type { ApiDeps } from "../deps.js";
import { logStreamRoute, type LogStreamOptions } from "../logStream.js";
import { openApiDocument, type RouteDoc } from "../openapi.js";
import { ViewCache } from "../viewCache.js";
import { backfillRoutes } from "./backfills.js";
import { backupRoutes } from "./backup.js";
import { configRoutes } from "./config.js";
import { daemonRoutes } from "./daemon.js";
import { dbRoutes } from "./db.js";
import { integrationRoutes } from "./integrations.js";
import { jobRoutes } from "./jobs.js";
import { metricsRoutes } from "./metrics.js";
import { observabilityRoutes } from "./observability.js";
import { runRoutes } from "./runs.js";
import type { ConfigWorker } from "../configWorker.js";
import { RunChanges } from "../runChanges.js";
import { timelineRoutes } from "./timeline.js";
import { upcomingRoutes } from "./upcoming.js";

export interface RoutesOptions {
  deps: ApiDeps;
  docs: RouteDoc[];
  logStream: LogStreamOptions;
  /** Parses config texts off the event loop (configWorker.ts). */
  configWorker: ConfigWorker;
}

/**
 * Every route of the daemon, registered in one place: the API, the
 * WebSocket log stream and the dashboard. It is one plugin so that the
 * whole set can be mounted under `api.base_path` with Fastify's `prefix`.
 */
export async function allRoutes(app: FastifyInstance, opts: RoutesOptions): Promise<void> {
  const { deps } = opts;
  const views = new ViewCache(deps.bus);
  app.addHook("onClose", async () => views.close());
  const changes = new RunChanges(deps.bus, `${deps.startedAt.toString(36)}${randomBytes(3).toString("hex")}`);
  // Held blocking queries are answered before the server waits for open requests to end.
  app.addHook("preClose", async () => changes.close());
  daemonRoutes(app, deps, views);
  jobRoutes(app, deps, views);
  backfillRoutes(app, deps);
  runRoutes(app, deps);
  timelineRoutes(app, deps, changes);
  upcomingRoutes(app, deps);
  observabilityRoutes(app, deps);
  configRoutes(app, deps, opts.configWorker);
  dbRoutes(app, deps, views);
  integrationRoutes(app, deps);
  metricsRoutes(app, deps);
  backupRoutes(app, deps);
  logStreamRoute(app, deps, opts.logStream);
  await dashboardRoutes(app, deps);

  let document: object | null = null;
  app.get(
    "/api/openapi.json",
    { schema: { summary: "This OpenAPI 3.1 document, built from the route schemas", tags: ["status"], response: { 200: { type: "object" } } } },
    async () => (document ??= openApiDocument(opts.docs, deps.version)),
  );
}
