import type { FastifyInstance } from "fastify";
import type { ProjectConfig } from "../../config/types.js";
import { frequencyLabel } from "../../config/index.js";
import { dagJson, type DagJson } from "../../graph/index.js";
import type { RunQuery } from "../../store/api.js";
import type { RunStatus, Trigger } from "../../store/types.js";
import type { ApiDeps } from "../deps.js";
import {
  dateSchema,
  jobNameSchema,
  paramFilters,
  paramFilterSchema,
  runRecordSchema,
  runStatusSchema,
  sliceQuery,
  TAG_PATTERN,
  triggerSchema,
} from "../schemas.js";
import { definedOnly } from "../query.js";

export const AUDIT_LIMIT_DEFAULT = 100;
export const AUDIT_LIMIT_MAX = 1000;

interface AuditQuery {
  job?: string;
  trigger?: Trigger;
  status?: RunStatus;
  since?: string;
  until?: string;
  reason?: string;
  tag?: string;
  param?: string[];
  backfill_id?: number;
  limit: number;
  offset: number;
}

export function observabilityRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get<{ Querystring: AuditQuery }>(
    "/api/audit",
    {
      schema: {
        summary: "Searchable run history, newest first",
        tags: ["observability"],
        querystring: {
          type: "object",
          properties: {
            job: jobNameSchema,
            trigger: triggerSchema,
            status: { ...runStatusSchema, description: "run status, any case (`failed`, `success`, `skipped`, ...)" },
            since: dateSchema,
            until: dateSchema,
            reason: { type: "string", maxLength: 500, description: "substring of the run's reason, case-insensitive" },
            tag: { type: "string", pattern: TAG_PATTERN },
            param: paramFilterSchema,
            backfill_id: { type: "integer", minimum: 1, description: "runs of one backfill (and the dependency runs of its cycles)" },
            ...sliceQuery(AUDIT_LIMIT_DEFAULT, AUDIT_LIMIT_MAX),
          },
        },
        response: {
          200: {
            type: "object",
            required: ["runs", "total", "limit", "offset"],
            properties: { runs: { type: "array", items: runRecordSchema }, total: { type: "integer" }, limit: { type: "integer" }, offset: { type: "integer" } },
          },
        },
      },
    },
    async (request) => {
      const { limit, offset, param, ...filters } = request.query;
      const slice = deps.store.runs.audit({ ...definedOnly<RunQuery>(filters), params: paramFilters(param) }, limit, offset);
      return { runs: slice.rows, total: slice.total, limit: slice.limit, offset: slice.offset };
    },
  );

  app.get(
    "/api/tags",
    {
      schema: {
        summary: "Every tag used by a job, with its job count",
        tags: ["observability"],
        response: {
          200: {
            type: "object",
            required: ["tags"],
            properties: {
              tags: { type: "array", items: { type: "object", required: ["tag", "jobs"], properties: { tag: { type: "string" }, jobs: { type: "integer" } } } },
            },
          },
        },
      },
    },
    async () => {
      const counts = new Map<string, number>();
      for (const job of deps.project().jobs.values()) for (const t of job.tags) counts.set(t, (counts.get(t) ?? 0) + 1);
      const tags = [...counts].map(([tag, jobs]) => ({ tag, jobs })).sort((a, b) => (a.tag < b.tag ? -1 : 1));
      return { tags };
    },
  );

  // The graph is rebuilt only when the project object changes (reload swaps it).
  const dagCache = new WeakMap<ProjectConfig, DagJson>();
  app.get(
    "/api/dag",
    {
      schema: {
        summary: "The dependency graph: nodes, edges (upstream -> downstream) and topological order",
        tags: ["observability"],
        response: {
          200: {
            type: "object",
            required: ["nodes", "edges", "order"],
            properties: {
              nodes: {
                type: "array",
                items: { type: "object", required: ["name", "frequency", "tags"], properties: { name: { type: "string" }, frequency: { type: "string" }, tags: { type: "array", items: { type: "string" } } } },
              },
              edges: {
                type: "array",
                items: {
                  type: "object",
                  required: ["from", "to", "kind"],
                  properties: { from: { type: "string" }, to: { type: "string" }, kind: { type: "string", enum: ["depends_on", "after"] } },
                },
              },
              order: { type: "array", items: { type: "string" } },
            },
          },
        },
      },
    },
    async () => {
      const project = deps.project();
      let dag = dagCache.get(project);
      if (!dag) {
        dag = dagJson(project.graph, (name) => {
          const job = project.jobs.get(name)!;
          return { frequency: frequencyLabel(job), tags: job.tags };
        });
        dagCache.set(project, dag);
      }
      return dag;
    },
  );
}
