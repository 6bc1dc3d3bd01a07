import type { FastifyInstance } from "fastify";
import { scheduleLabel } from "../../config/index.js";
import { slotsBetween } from "../../schedule/nextRun.js";
import type { ApiDeps } from "../deps.js";
import { jobNameSchema, TAG_PATTERN } from "../schemas.js";
import { MAX_INSTANT_MS } from "../../shared/instant.js";
import { instantQuery } from "../query.js";

/**
 * `GET /api/upcoming`: the next slots of every scheduled job over the next
 * 1-7 days, from the schedule code `svc next` uses (DST notes, excluded
 * slots marked with the reason), for the dashboard's Upcoming view and the
 * job page's panel.
 */

const DAY_MS = 86_400_000;
export const UPCOMING_MAX_DAYS = 7;
export const UPCOMING_DEFAULT_LIMIT = 5_000;
export const UPCOMING_MAX_LIMIT = 20_000;
export const UPCOMING_DEFAULT_PER_JOB = 100;
export const UPCOMING_MAX_PER_JOB = 1_000;

const str = { type: "string" } as const;
const strOrNull = { type: ["string", "null"] } as const;

const slotSchema = {
  type: "object",
  required: ["job", "at", "local", "zone_abbr", "note", "excluded"],
  properties: {
    job: str,
    at: { type: "string", description: "the instant, ISO UTC" },
    local: { type: "string", description: 'in the job\'s zone: "2027-03-14T03:00:00-04:00 EDT"' },
    zone_abbr: str,
    note: { ...strOrNull, description: "set when a DST rule placed the slot (as svc next)" },
    excluded: { ...strOrNull, description: "why the slot does not run (exclude), else null" },
  },
} as const;

const jobSchema = {
  type: "object",
  required: ["name", "timezone", "frequency", "paused", "slots", "more"],
  properties: {
    name: str,
    timezone: str,
    frequency: str,
    paused: { type: "boolean", description: "a paused job's slots do not run until it is resumed" },
    slots: { type: "integer", description: "its slots found in the window (at most `per_job`)" },
    more: { type: "boolean", description: "it has more slots in the window than `per_job`" },
  },
} as const;

interface Query {
  from?: string;
  days: number;
  job?: string;
  tag?: string;
  q?: string;
  limit: number;
  per_job: number;
}

export function upcomingRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get<{ Querystring: Query }>(
    "/api/upcoming",
    {
      schema: {
        summary: "The next scheduled slots of every job over 1-7 days, with DST notes and excluded slots (additive)",
        tags: ["jobs"],
        querystring: {
          type: "object",
          properties: {
            from: { type: "string", minLength: 1, maxLength: 40, description: "start (ISO 8601 instant or date; default now): slots strictly after it" },
            days: { type: "integer", minimum: 1, maximum: UPCOMING_MAX_DAYS, default: 1, description: "how many days from `from` (1-7)" },
            job: { ...jobNameSchema, description: "only this job" },
            tag: { type: "string", pattern: TAG_PATTERN, description: "only jobs with this tag" },
            q: { type: "string", maxLength: 64, description: "only jobs whose name contains this, case-insensitive" },
            limit: { type: "integer", minimum: 1, maximum: UPCOMING_MAX_LIMIT, default: UPCOMING_DEFAULT_LIMIT, description: "most slots in all (the earliest)" },
            per_job: { type: "integer", minimum: 1, maximum: UPCOMING_MAX_PER_JOB, default: UPCOMING_DEFAULT_PER_JOB, description: "most slots of one job" },
          },
        },
        response: {
          200: {
            type: "object",
            required: ["from", "to", "days", "truncated", "jobs", "unscheduled", "slots"],
            properties: {
              from: str,
              to: str,
              days: { type: "integer" },
              truncated: { type: "boolean", description: "more slots than `limit`: the latest were left out" },
              jobs: { type: "array", items: jobSchema, description: "the scheduled jobs the filters select, by name" },
              unscheduled: { type: "integer", description: "selected jobs without a schedule (manual, after:)" },
              slots: { type: "array", items: slotSchema, description: "by instant" },
            },
          },
        },
      },
    },
    async (request) => {
      const { days, job: only, tag, q, limit, per_job: perJob } = request.query;
      const from = request.query.from === undefined ? Date.now() : instantQuery("from", request.query.from);
      const to = Math.min(from + days * DAY_MS, MAX_INSTANT_MS);
      const paused = new Set(deps.store.jobState.pausedJobs());
      const match = q?.toLowerCase() ?? "";
      const jobs: { name: string; timezone: string; frequency: string; paused: boolean; slots: number; more: boolean }[] = [];
      const slots: { job: string; at: string; local: string; zone_abbr: string; note: string | null; excluded: string | null; t: number }[] = [];
      let unscheduled = 0;
      const selected = [...deps.project().jobs.values()]
        .filter((j) => (only === undefined || j.name === only) && (tag === undefined || j.tags.includes(tag)) && (match === "" || j.name.toLowerCase().includes(match)))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const job of selected) {
        const f = job.schedule.frequency;
        if (f === "manual" || f === "after") {
          unscheduled++;
          continue;
        }
        // Strictly after `from`, as svc next; within [from, to).
        const got = slotsBetween(job.schedule, from + 1, to, perJob);
        jobs.push({ name: job.name, timezone: job.schedule.timezone, frequency: scheduleLabel(job), paused: paused.has(job.name), slots: got.slots.length, more: got.truncated });
        for (const s of got.slots) slots.push({ job: job.name, at: s.utc, local: s.local, zone_abbr: s.zoneAbbr, note: s.note, excluded: s.excluded, t: s.at });
      }
      slots.sort((a, b) => a.t - b.t || (a.job < b.job ? -1 : 1));
      const truncated = slots.length > limit;
      if (truncated) slots.length = limit;
      return {
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        days,
        truncated,
        jobs,
        unscheduled,
        slots: slots.map(({ t: _t, ...s }) => s),
      };
    },
  );
}
