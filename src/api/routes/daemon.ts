import type { FastifyInstance } from "fastify";
import type { ConfigIssue } from "../../config/types.js";
import type { ApiDeps } from "../deps.js";
import { invalidConfig } from "../errors.js";
import { configIssueSchema } from "../schemas.js";
import type { ViewCache } from "../viewCache.js";
import { jobCounts } from "../views.js";

const countsSchema = {
  type: "object",
  required: ["total", "active", "paused", "running"],
  properties: { total: { type: "integer" }, active: { type: "integer" }, paused: { type: "integer" }, running: { type: "integer" } },
} as const;

export function rejectedReload(errors: ConfigIssue[]) {
  return invalidConfig(
    `config reload rejected (${errors.length} error${errors.length === 1 ? "" : "s"}): the previous config stays in effect`,
    errors,
  );
}

export function daemonRoutes(app: FastifyInstance, deps: ApiDeps, views: ViewCache): void {
  const counts = () => views.get("counts", () => ({ value: jobCounts(deps.project(), deps.store, deps.engine) }));

  app.get(
    "/api/status",
    {
      schema: {
        summary: "Daemon health and uptime",
        tags: ["status"],
        response: {
          200: {
            type: "object",
            required: ["status", "version", "uptime_s", "started_at", "jobs"],
            properties: {
              status: { type: "string", enum: ["ok"] },
              version: { type: "string" },
              uptime_s: { type: "integer" },
              started_at: { type: "string" },
              jobs: countsSchema,
            },
          },
        },
      },
    },
    async () => ({
      status: "ok",
      version: deps.version,
      uptime_s: Math.max(0, Math.floor((Date.now() - deps.startedAt) / 1000)),
      started_at: new Date(deps.startedAt).toISOString(),
      jobs: counts(),
    }),
  );

  app.get(
    "/api/daemon/info",
    {
      schema: {
        summary: "The daemon info record",
        tags: ["daemon"],
        response: {
          200: {
            type: "object",
            required: ["pid", "config_path", "daemon_config_path", "started_at", "database_path", "active_jobs", "paused_jobs", "total_jobs", "version"],
            properties: {
              pid: { type: "integer" },
              config_path: { type: "string" },
              daemon_config_path: { type: ["string", "null"] },
              started_at: { type: "string" },
              database_path: { type: "string" },
              data_dir: { type: "string" },
              active_jobs: { type: "integer" },
              paused_jobs: { type: "integer" },
              total_jobs: { type: "integer" },
              running_jobs: { type: "integer" },
              version: { type: "string" },
              config_loaded_at: { type: ["string", "null"], description: "when svc.yaml and svcd.yaml were last loaded (start or reload)" },
              config_sha256: { type: ["string", "null"], description: "SHA-256 of svc.yaml as then loaded (svc status warns when the file differs)" },
              daemon_config_sha256: { type: ["string", "null"], description: "SHA-256 of svcd.yaml as then loaded, null without one" },
            },
          },
        },
      },
    },
    async () => {
      const c = counts();
      const loaded = deps.configLoaded?.() ?? null;
      return {
        pid: deps.pid,
        config_path: deps.paths.config,
        daemon_config_path: deps.paths.daemonConfig,
        started_at: new Date(deps.startedAt).toISOString(),
        database_path: deps.paths.database,
        data_dir: deps.paths.dataDir,
        active_jobs: c.active,
        paused_jobs: c.paused,
        total_jobs: c.total,
        running_jobs: c.running,
        version: deps.version,
        config_loaded_at: loaded ? new Date(loaded.at).toISOString() : null,
        config_sha256: loaded?.svcSha256 ?? null,
        daemon_config_sha256: loaded?.svcdSha256 ?? null,
      };
    },
  );

  app.post(
    "/api/daemon/reload",
    {
      schema: {
        summary: "Reload svc.yaml and svcd.yaml (SPEC rule 10); 422 keeps the old config",
        tags: ["daemon"],
        response: {
          200: { type: "object", required: ["ok", "jobs"], properties: { ok: { type: "boolean", enum: [true] }, jobs: { type: "integer" } } },
          422: { description: "invalid_config: `details` lists every error", type: "object", properties: { error: { type: "object", properties: { details: { type: "array", items: configIssueSchema } } } } },
        },
      },
    },
    async () => {
      const result = await deps.reload();
      if (!result.ok) throw rejectedReload(result.errors);
      return { ok: true, jobs: result.jobs };
    },
  );

  app.post<{ Body: { force?: boolean } | undefined; Querystring: { force?: boolean } }>(
    "/api/daemon/stop",
    {
      schema: {
        summary: "Stop the daemon: graceful (drain running jobs), or forced with `force: true`",
        tags: ["daemon"],
        querystring: { type: "object", properties: { force: { type: "boolean" } } },
        body: { type: ["object", "null"], additionalProperties: false, properties: { force: { type: "boolean" } } },
        response: {
          200: { type: "object", required: ["stopping", "force"], properties: { stopping: { type: "boolean" }, force: { type: "boolean" } } },
        },
      },
      // Shutdown starts once the answer is on the wire, so the caller always gets it.
      onResponse: async (request, reply) => {
        if (reply.statusCode !== 200) return;
        const force = (request.body as { force?: boolean } | undefined)?.force ?? (request.query as { force?: boolean }).force ?? false;
        deps.stop({ force });
      },
    },
    async (request) => ({ stopping: true, force: request.body?.force ?? request.query.force ?? false }),
  );
}
