import type { FastifyInstance } from "fastify";
import { isTerminal } from "../../store/runStatus.js";
import type { LogStream, RunRecord } from "../../store/types.js";
import type { ApiDeps } from "../deps.js";
import { notFound } from "../errors.js";
import { cycleView } from "../cycleView.js";
import { logLineSchema, outputRowSchema, runParams, runRecordSchema, sliceQuery, streamSchema } from "../schemas.js";

const tags = ["runs"];

export const LOG_PAGE_DEFAULT = 1000;
export const LOG_PAGE_MAX = 10_000;

type IdParams = { Params: { id: number } };

export function runRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { store } = deps;

  const requireRun = (id: number): RunRecord => {
    const run = store.runs.get(id);
    if (!run) throw notFound(`run ${id} not found`);
    return run;
  };

  app.get<{ Params: { id: string } }>(
    "/api/cycles/:id",
    {
      schema: {
        summary: "Every run of one cycle, oldest first, and whether the cycle has settled (nothing in it can move on by itself)",
        tags,
        params: { type: "object", required: ["id"], properties: { id: { type: "string", pattern: "^[0-9a-fA-F-]{1,64}$", description: "cycle id" } } },
        response: {
          200: {
            type: "object",
            required: ["cycle_id", "runs", "settled", "waiting"],
            properties: {
              cycle_id: { type: "string" },
              runs: { type: "array", items: runRecordSchema },
              settled: { type: "boolean", description: "no run RUNNING or RETRYING, and every PENDING run waits on a gate only a person can open" },
              waiting: {
                type: "array",
                description: "the cycle's PENDING runs and the upstreams each waits for",
                items: {
                  type: "object",
                  required: ["run_id", "job", "blocked_by"],
                  properties: {
                    run_id: { type: "integer" },
                    job: { type: "string" },
                    blocked_by: {
                      type: "array",
                      items: {
                        type: "object",
                        required: ["job", "kind", "text"],
                        properties: { job: { type: "string" }, kind: { type: "string", enum: ["active", "ended", "absent"] }, text: { type: "string" } },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
    async (request) => {
      const view = cycleView(deps.project(), store, request.params.id);
      if (!view) throw notFound(`cycle ${request.params.id} not found: no run was recorded in it`);
      return view;
    },
  );

  app.get<IdParams>(
    "/api/runs/:id",
    {
      schema: {
        summary: "One run record (every job_runs column plus duration_ms)",
        tags,
        params: runParams,
        response: { 200: runRecordSchema },
      },
    },
    async (request) => requireRun(request.params.id),
  );

  app.get<IdParams & { Querystring: { limit: number; offset: number; stream?: LogStream } }>(
    "/api/runs/:id/logs",
    {
      schema: {
        summary: "Log lines of a run in seq order, every stream unless `stream` filters",
        tags,
        params: runParams,
        querystring: {
          type: "object",
          properties: { ...sliceQuery(LOG_PAGE_DEFAULT, LOG_PAGE_MAX), stream: streamSchema },
        },
        response: {
          200: {
            type: "object",
            required: ["lines", "total"],
            properties: { lines: { type: "array", items: logLineSchema }, total: { type: "integer" } },
          },
        },
      },
    },
    async (request) => {
      const run = requireRun(request.params.id);
      // A live run's newest lines may still sit in the write buffer.
      if (!isTerminal(run.status)) store.logs.flush();
      const { limit, offset, stream } = request.query;
      const page = store.logs.forRun(run.id, { limit, offset, ...(stream ? { streams: [stream] } : {}) });
      return { lines: page.lines.map(({ seq, ts, stream: s, line }) => ({ seq, ts, stream: s, line })), total: page.total };
    },
  );

  app.get<IdParams>(
    "/api/runs/:id/outputs",
    {
      schema: {
        summary: "Output variables captured for a run",
        tags,
        params: runParams,
        response: { 200: { type: "object", required: ["outputs"], properties: { outputs: { type: "array", items: outputRowSchema } } } },
      },
    },
    async (request) => {
      const run = requireRun(request.params.id);
      const outputs = store.outputs.forRun(run.id).map(({ var_name, value, job_name, cycle_id, created_at }) => ({
        var_name,
        value,
        job_name,
        cycle_id,
        created_at,
      }));
      return { outputs };
    },
  );
}
