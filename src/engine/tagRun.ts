import type { JobConfig, ProjectConfig } from "../config/types.js";

/**
 * What `svc run --tag T` (POST /api/jobs/run) triggers. Pure: config in,
 * plan out.
 *
 * Only the tag's roots are triggered: tagged jobs none of whose ancestors
 * (direct or transitive) has the tag. They share one new cycle, so a job
 * downstream of two roots gates on both and runs once, with both outputs.
 * Everything else follows the roots through CONTRACT §3's dependency
 * triggering, in that cycle: triggering a downstream job directly would run
 * it before its upstreams, without their outputs (the bug this fixes).
 *
 * A tagged job the roots cannot reach by dependency triggering (a time or
 * manual frequency with an upstream inside the tag, or a chain broken by
 * such a job, or paused) does not run; `notTriggered` says why.
 */
export interface TagRunPlan {
  tag: string;
  /** Triggered now, in file order. */
  roots: string[];
  /** Dependency-triggered from the roots (tagged or not), upstreams first: they follow in the cycle. */
  follow: string[];
  /** Tagged jobs that will not run, each with the reason. */
  notTriggered: { job: string; why: string }[];
}

export function planTagRun(project: Pick<ProjectConfig, "jobs" | "graph">, tag: string, isPaused: (job: string) => boolean): TagRunPlan {
  const tagged = [...project.jobs.values()].filter((j) => j.tags.includes(tag));
  const inTag = new Set(tagged.map((j) => j.name));
  const roots = tagged.filter((j) => !project.graph.ancestors(j.name).some((a) => inTag.has(a))).map((j) => j.name);

  // Dependency triggering from the roots, in topological order (upstreams first).
  const reached = new Set(roots);
  const follow: string[] = [];
  for (const name of project.graph.order) {
    if (reached.has(name)) continue;
    const job = project.jobs.get(name);
    if (!job || !job.dependencyTriggered || isPaused(name)) continue;
    if (job.upstreams.some((u) => reached.has(u))) {
      reached.add(name);
      follow.push(name);
    }
  }

  const notTriggered = tagged.filter((j) => !reached.has(j.name)).map((j) => ({ job: j.name, why: whyNot(j, reached, isPaused) }));
  return { tag, roots, follow, notTriggered };
}

function whyNot(job: JobConfig, reached: ReadonlySet<string>, isPaused: (job: string) => boolean): string {
  const ups = job.upstreams.join(", ");
  if (job.dependencyTriggered && isPaused(job.name)) return `${job.name} is paused: it is not triggered by its upstreams (${ups}) until resumed`;
  if (!job.dependencyTriggered) {
    const freq = job.schedule.frequency;
    return `${job.name} has frequency ${freq}: its upstreams (${ups}) only gate it, they do not trigger it; it runs ${freq === "manual" ? "when run by hand" : "at its own schedule"}`;
  }
  const broken = job.upstreams.filter((u) => !reached.has(u));
  return `its upstream${broken.length > 1 ? "s" : ""} ${broken.join(", ")} ${broken.length > 1 ? "are" : "is"} not triggered by this run, so ${job.name} is not either`;
}
