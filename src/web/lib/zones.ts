import { useApi } from "./useApi.js";

/**
 * The job's time zone for the next-run tooltip. `/api/jobs` items carry
 * `timezone` (an addition to CONTRACT §4); without it the zone is read from
 * the effective config (`GET /api/config`), whose job entries have
 * defaults applied.
 */
export type ZoneMap = (job: string) => string | null;

function pick(o: unknown, ...keys: string[]): unknown {
  let cur = o;
  for (const k of keys) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

export function zonesFromConfig(body: unknown): ZoneMap {
  const config = pick(body, "config");
  const fallback = pick(config, "defaults", "timezone");
  let jobs = pick(config, "jobs");
  if (Array.isArray(jobs)) {
    jobs = Object.fromEntries(jobs.map((j: unknown) => [String(pick(j, "name")), j]));
  }
  return (name) => {
    const job = jobs && typeof jobs === "object" ? (jobs as Record<string, unknown>)[name] : undefined;
    const z = pick(job, "timezone") ?? pick(job, "schedule", "timezone") ?? fallback;
    return typeof z === "string" ? z : null;
  };
}

/** `needed`: some job summary lacks `timezone` (an older API); only then is the config fetched. */
export function useJobZones(needed: boolean): ZoneMap {
  const { data } = useApi<unknown>(needed ? "api/config" : null, 60_000);
  return data === undefined ? () => null : zonesFromConfig(data);
}
