/** Job lookups shared by the job commands: names, tags and unknown-job messages. */
import { CliError, UsageError } from "../output.js";
import { ApiError } from "./errors.js";
import type { DaemonClient } from "./http.js";
import type { ActiveRun, JobsAnswer } from "./types.js";

/** A 404 from a job route, said the CLI way: names the job and where to find the list. */
export async function forJob<T>(name: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (e instanceof ApiError && e.status === 404 && /unknown job|not in svc\.yaml/i.test(e.message)) {
      throw new CliError(`unknown job "${name}" (svc status lists the jobs)`);
    }
    throw e;
  }
}

/** Job names with the tag; none is an error naming the tag. */
export async function jobsWithTag(client: DaemonClient, tag: string): Promise<string[]> {
  const { jobs } = await client.get<JobsAnswer>("/api/jobs", { tag });
  if (jobs.length === 0) throw new CliError(`no job has the tag "${tag}" (svc tags list shows the tags)`);
  return jobs.map((j) => j.name);
}

/** `<job>` or `--tag <tag>`, exactly one of them. */
export function jobOrTag(command: string, job: string | undefined, tag: string | undefined): { job: string } | { tag: string } {
  if (job !== undefined && tag !== undefined) throw new UsageError(`${command}: give a job name or --tag, not both`, `see 'svc ${command} --help'`);
  if (job !== undefined) return { job };
  if (tag !== undefined) return { tag };
  throw new UsageError(`${command}: give a job name or --tag <tag>`, `see 'svc ${command} --help'`);
}

/** `/api/jobs/<name>...` with the name encoded. */
export function jobPath(name: string, rest = ""): string {
  return `/api/jobs/${encodeURIComponent(name)}${rest}`;
}

/**
 * What the job is doing now, from its unfinished runs: running, else
 * retrying, else pending; idle without any. A count when there are several
 * (`running (2)`).
 */
export function jobState(j: { active_runs: ActiveRun[] }): "running" | "retrying" | "pending" | "idle" {
  for (const s of ["RUNNING", "RETRYING", "PENDING"] as const) {
    if (j.active_runs.some((r) => r.status === s)) return s.toLowerCase() as "running" | "retrying" | "pending";
  }
  return "idle";
}
