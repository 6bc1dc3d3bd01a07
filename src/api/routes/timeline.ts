import type { FastifyInstance } from "fastify";
import type { ProjectConfig } from "../../config/types.js";
import { TIMELINE_COLUMNS, TIMELINE_MAX_RUNS, type TimelineRun } from "../../store/timeline.js";
import type { ApiDeps } from "../deps.js";
import { badRequest } from "../errors.js";
import type { RunChanges } from "../runChanges.js";
import { jobNameSchema, runRecordSchema, TAG_PATTERN } from "../schemas.js";
import { MIN_INSTANT_MS } from "../../shared/instant.js";
import { instantQuery } from "../query.js";

/**
 * The dashboard's timeline: the runs overlapping a window (`GET
 * /api/timeline`), then what changed since (`GET /api/timeline/changes`, a
 * blocking query fed by the engine's run events: see runChanges.ts).
 */

const HOUR_MS = 3_600_000;
export const TIMELINE_DEFAULT_MS = 24 * HOUR_MS;
/** The widest window: 31 days (a month of a job every minute is 44,640 runs). */
export const TIMELINE_MAX_WINDOW_MS = 31 * 24 * HOUR_MS;
export const TIMELINE_DEFAULT_RUNS = 10_000;
export const CHANGES_DEFAULT_WAIT_S = 25;
export const CHANGES_MAX_WAIT_S = 60;

const tags = ["runs"];
const instant = { type: "string", minLength: 1, maxLength: 40, description: "ISO 8601 instant (`2026-11-24T06:00:00Z`) or date (UTC midnight)" } as const;
const filters = {
  job: { ...jobNameSchema, description: "only this job (also one no longer in svc.yaml)" },
  tag: { type: "string", pattern: TAG_PATTERN, description: "only jobs that have this tag now (svc.yaml)" },
  q: { type: "string", maxLength: 64, description: "only jobs whose name contains this, case-insensitive" },
} as const;

const attemptSchema = {
  type: "object",
  required: ["attempt", "started_at", "finished_at", "exit_code", "error"],
  properties: {
    attempt: { type: "integer" },
    started_at: { type: "string" },
    finished_at: { type: ["string", "null"] },
    exit_code: { type: ["integer", "null"] },
    error: { type: ["string", "null"] },
  },
} as const;

const p = runRecordSchema.properties;
/** One run as an array, in the order of `columns` (TIMELINE_COLUMNS). */
const timelineRunSchema = {
  type: "array",
  minItems: TIMELINE_COLUMNS.length,
  maxItems: TIMELINE_COLUMNS.length,
  prefixItems: [
    p.id,
    p.job_name,
    p.status,
    p.attempt,
    p.trigger,
    { type: "string", description: "start (ISO)" },
    { type: ["string", "null"], description: "end (ISO), null while active" },
    p.exit_code,
    p.sla_breached,
    { anyOf: [{ type: "array", items: attemptSchema }, { type: "null" }], description: "each attempt of a run that retried, else null" },
  ],
} as const;
const columnsSchema = { type: "array", items: { type: "string", enum: TIMELINE_COLUMNS }, description: "the names of each run array's items" } as const;

interface Filters {
  job?: string;
  tag?: string;
  q?: string;
}

/**
 * `names`: the configured jobs the filters select, sorted (the timeline's
 * rows). `only`: the jobs whose runs to read, or undefined for every job
 * (runs of jobs removed from svc.yaml included).
 */
function selectedJobs(project: ProjectConfig, f: Filters): { names: string[]; only: string[] | undefined } {
  const match = f.q?.toLowerCase() ?? "";
  const names: string[] = [];
  for (const job of project.jobs.values()) {
    if (f.job !== undefined && job.name !== f.job) continue;
    if (f.tag !== undefined && !job.tags.includes(f.tag)) continue;
    if (match !== "" && !job.name.toLowerCase().includes(match)) continue;
    names.push(job.name);
  }
  names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // A job no longer in svc.yaml still has history (docs/API.md, Conventions): `job=` never 404s.
  const only = f.job !== undefined ? [f.job] : f.tag !== undefined ? names : undefined;
  return { names, only };
}

export function timelineRoutes(app: FastifyInstance, deps: ApiDeps, changes: RunChanges): void {
  const { store } = deps;

  app.get<{ Querystring: Filters & { from?: string; to?: string; limit: number } }>(
    "/api/timeline",
    {
      schema: {
        summary: "Runs overlapping a time window, for the dashboard's timeline (additive)",
        tags,
        querystring: {
          type: "object",
          properties: {
            from: { ...instant, description: `window start (default: \`to\` minus 24 h)` },
            to: { ...instant, description: "window end, exclusive (default: now)" },
            ...filters,
            limit: { type: "integer", minimum: 1, maximum: TIMELINE_MAX_RUNS, default: TIMELINE_DEFAULT_RUNS, description: "most runs returned (the latest-starting)" },
          },
        },
        response: {
          200: {
            type: "object",
            required: ["from", "to", "now", "cursor", "truncated", "limit", "jobs", "columns", "runs"],
            properties: {
              columns: columnsSchema,
              from: { type: "string" },
              to: { type: "string" },
              now: { type: "string", description: "the daemon's clock, for the now line and running bars" },
              cursor: { type: "string", description: "for GET /api/timeline/changes" },
              truncated: { type: "boolean", description: "more runs overlap the window than `limit`: the earliest were left out" },
              limit: { type: "integer" },
              jobs: { type: "array", items: { type: "string" }, description: "configured jobs the filters select, sorted by name" },
              runs: { type: "array", items: timelineRunSchema },
            },
          },
        },
      },
    },
    async (request) => {
      const { from, to, limit, ...f } = request.query;
      const now = Date.now();
      const toMs = to === undefined ? now : instantQuery("to", to);
      const fromMs = from === undefined ? Math.max(MIN_INSTANT_MS, toMs - TIMELINE_DEFAULT_MS) : instantQuery("from", from);
      if (fromMs >= toMs) throw badRequest(`"from" (${new Date(fromMs).toISOString()}) must be before "to" (${new Date(toMs).toISOString()})`);
      if (toMs - fromMs > TIMELINE_MAX_WINDOW_MS) {
        throw badRequest(`the window from "from" to "to" is ${Math.ceil((toMs - fromMs) / HOUR_MS)} h long; at most 31 days (744 h) are allowed: narrow it`);
      }
      const { names, only } = selectedJobs(deps.project(), f);
      // Read the cursor first: a change committed while the query runs is then sent again, never lost.
      const cursor = changes.cursor();
      const { runs, truncated } = store.timeline.range({
        from: new Date(fromMs).toISOString(),
        to: new Date(toMs).toISOString(),
        ...(only === undefined ? {} : { jobs: only }),
        ...(f.q === undefined ? {} : { match: f.q }),
        limit,
      });
      return {
        from: new Date(fromMs).toISOString(),
        to: new Date(toMs).toISOString(),
        now: new Date(now).toISOString(),
        cursor,
        truncated,
        limit,
        jobs: names,
        columns: TIMELINE_COLUMNS,
        runs,
      };
    },
  );

  app.get<{ Querystring: Filters & { cursor: string; wait: number } }>(
    "/api/timeline/changes",
    {
      schema: {
        summary: "Runs created or changed since a cursor; waits up to `wait` seconds for one (additive)",
        tags,
        querystring: {
          type: "object",
          required: ["cursor"],
          properties: {
            cursor: { type: "string", minLength: 1, maxLength: 64, description: "`cursor` of the previous answer (or of GET /api/timeline)" },
            wait: { type: "integer", minimum: 0, maximum: CHANGES_MAX_WAIT_S, default: CHANGES_DEFAULT_WAIT_S, description: "seconds to wait for a change (0: answer at once)" },
            ...filters,
          },
        },
        response: {
          200: {
            type: "object",
            required: ["cursor", "reset", "columns", "runs"],
            properties: {
              columns: columnsSchema,
              cursor: { type: "string" },
              reset: { type: "boolean", description: "the cursor is from another daemon run or too old: load GET /api/timeline again" },
              runs: { type: "array", items: timelineRunSchema },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const { cursor, wait, ...f } = request.query;
      const { only } = selectedJobs(deps.project(), f);
      const wanted = only === undefined ? null : new Set(only);
      const match = f.q?.toLowerCase() ?? "";
      const keep = (r: TimelineRun) => (wanted === null || wanted.has(r[1])) && (match === "" || r[1].toLowerCase().includes(match));
      // A held answer must end before api.timeouts.write cuts the idle connection.
      const writeMs = deps.daemonConfig().api.timeouts.writeMs;
      const waitMs = Math.min(wait * 1000, writeMs > 0 ? writeMs / 2 : Infinity);
      const deadline = Date.now() + waitMs;
      let gone = false;
      reply.raw.once("close", () => (gone = true));
      let answer = changes.since(cursor);
      let runs = answer.runs.filter(keep);
      while (!answer.reset && runs.length === 0 && Date.now() < deadline && !gone && !changes.isClosed) {
        await changes.wait(deadline - Date.now(), reply.raw);
        answer = changes.since(answer.cursor);
        runs = answer.runs.filter(keep);
      }
      // The ring's rows are shared: a retried run's attempts go into a copy.
      const attempts = store.timeline.attempts(runs.filter((r) => r[3] > 1).map((r) => r[0]));
      const withAttempts = (r: TimelineRun): TimelineRun => {
        const spans = attempts.get(r[0]);
        return spans === undefined ? r : [r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], spans];
      };
      return { cursor: answer.cursor, reset: answer.reset, columns: TIMELINE_COLUMNS, runs: runs.map(withAttempts) };
    },
  );
}
