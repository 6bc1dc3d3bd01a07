/**
 * JobSeries keeps each job's lines between scrapes and writes them again only
 * when the job changed. These tests check that the text stays exactly what a
 * plain renderer makes from the same counts and gauges (the layout /metrics
 * had before the lines were kept: one line per sample, families in a fixed
 * order, counters in the order jobs first counted, gauges in project order),
 * after every step of long random sequences of runs, SLA breaches, gauge
 * changes, reloads that drop or reorder jobs.
 */
import { describe, expect, it } from "vitest";
import { JobSeries, type JobGauges } from "./jobSeries.js";
import { DURATION_BUCKETS } from "./metrics.js";
import { mulberry32 } from "../../test/helpers/mulberry32.js";

/** The reference: every sample from the model, nothing kept. */
interface Model {
  counts: Map<string, { runs: Map<string, number>; durations: number[]; sla: number }>;
  gauges: Map<string, JobGauges>;
}

function reference(m: Model, order: readonly string[]): string {
  const out: string[] = [];
  const head = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  head("svc_runs_total", "counter", "Runs that reached their final status (SUCCESS, FAILED, SKIPPED) since svcd started, by job, status and trigger.");
  for (const [job, c] of m.counts) {
    for (const [key, n] of c.runs) {
      const [status, trigger] = key.split(" ");
      out.push(`svc_runs_total{job_name="${job}",status="${status}",trigger="${trigger}"} ${n}`);
    }
  }
  head("svc_run_duration_seconds", "histogram", "Duration of finished runs that started (first start to end, retries included), by job.");
  for (const [job, c] of m.counts) {
    if (c.durations.length === 0) continue;
    for (const le of [...DURATION_BUCKETS, Infinity]) {
      const n = c.durations.filter((d) => d <= le).length;
      out.push(`svc_run_duration_seconds_bucket{job_name="${job}",le="${le === Infinity ? "+Inf" : le}"} ${n}`);
    }
    let sum = 0;
    for (const d of c.durations) sum += d;
    out.push(`svc_run_duration_seconds_sum{job_name="${job}"} ${sum}`, `svc_run_duration_seconds_count{job_name="${job}"} ${c.durations.length}`);
  }
  head("svc_sla_breaches_total", "counter", "Runs that passed their job's sla while running, by job.");
  for (const [job, c] of m.counts) if (c.sla > 0) out.push(`svc_sla_breaches_total{job_name="${job}"} ${c.sla}`);
  const g = (job: string) => m.gauges.get(job)!;
  head("svc_runs_running", "gauge", "Runs RUNNING now, by job.");
  for (const job of order) out.push(`svc_runs_running{job_name="${job}"} ${g(job).running}`);
  head("svc_job_last_success_timestamp_seconds", "gauge", "When the job's last successful run finished (Unix time); absent for a job that never succeeded.");
  for (const job of order) if (g(job).lastSuccess !== null) out.push(`svc_job_last_success_timestamp_seconds{job_name="${job}"} ${g(job).lastSuccess}`);
  head("svc_job_next_run_timestamp_seconds", "gauge", "The job's next scheduled instant (Unix time); absent for manual and after: jobs.");
  for (const job of order) if (g(job).nextRun !== null) out.push(`svc_job_next_run_timestamp_seconds{job_name="${job}"} ${g(job).nextRun}`);
  head("svc_job_paused", "gauge", "1 when the job is paused, else 0.");
  for (const job of order) out.push(`svc_job_paused{job_name="${job}"} ${g(job).paused ? 1 : 0}`);
  return `${out.join("\n")}\n`;
}

function render(series: JobSeries, m: Model, order: readonly string[]): string {
  return series
    .render(order, (job, into) => {
      const g = m.gauges.get(job)!;
      into.running = g.running;
      into.lastSuccess = g.lastSuccess;
      into.nextRun = g.nextRun;
      into.paused = g.paused;
    })
    .join("");
}

describe("JobSeries", () => {
  it("writes the same text as a plain renderer after every step of random runs, gauges and reloads", () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const r = mulberry32(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
      // More jobs than one block of text (32), so blocks move as jobs come and go.
      const all = Array.from({ length: 80 }, (_, i) => `job-${i}.x_y`);
      let order = all.slice(0, 60);
      const m: Model = { counts: new Map(), gauges: new Map() };
      const series = new JobSeries(DURATION_BUCKETS);
      const gaugeOf = (job: string) => {
        let g = m.gauges.get(job);
        if (!g) m.gauges.set(job, (g = { running: 0, lastSuccess: null, nextRun: null, paused: false }));
        return g;
      };
      for (const job of all) gaugeOf(job);
      for (let step = 0; step < 400; step++) {
        const what = r();
        const job = pick(order);
        if (what < 0.35) {
          const status = pick(["SUCCESS", "FAILED", "SKIPPED"]);
          const trigger = pick(["schedule", "manual", "dependency"]);
          // Durations on and around the bucket bounds, and none for a run that never started.
          const duration = status === "SKIPPED" && r() < 0.7 ? null : r() < 0.3 ? pick(DURATION_BUCKETS) : r() * 30_000;
          series.run(job, status, trigger, duration);
          let c = m.counts.get(job);
          if (!c) m.counts.set(job, (c = { runs: new Map(), durations: [], sla: 0 }));
          const key = `${status} ${trigger}`;
          c.runs.set(key, (c.runs.get(key) ?? 0) + 1);
          if (duration !== null) c.durations.push(duration);
        } else if (what < 0.42) {
          series.slaBreach(job);
          let c = m.counts.get(job);
          if (!c) m.counts.set(job, (c = { runs: new Map(), durations: [], sla: 0 }));
          c.sla++;
        } else if (what < 0.8) {
          const g = gaugeOf(job);
          const field = pick(["running", "lastSuccess", "nextRun", "paused"] as const);
          if (field === "running") g.running = Math.floor(r() * 3);
          else if (field === "lastSuccess") g.lastSuccess = r() < 0.2 ? null : 1_764_000_000 + Math.round(r() * 1e6) / 1000;
          else if (field === "nextRun") g.nextRun = r() < 0.3 ? null : 1_764_000_000 + Math.floor(r() * 1e4);
          else g.paused = !g.paused;
        } else if (what < 0.85) {
          // A reload: some jobs go, some come (back), the order may change.
          order = all.filter(() => r() < 0.7).sort(() => r() - 0.5);
          if (order.length === 0) order = [all[0]!];
          const keep = new Map(order.map((j) => [j, true]));
          series.retain(keep);
          for (const j of [...m.counts.keys()]) if (!keep.has(j)) m.counts.delete(j);
        }
        if (r() < 0.5) expect(render(series, m, order), `seed ${seed}, step ${step}`).toBe(reference(m, order));
      }
      expect(render(series, m, order), `seed ${seed}, end`).toBe(reference(m, order));
    }
  });

  it("hands on the same strings while nothing changed, and new text only for the block of the job that did", () => {
    const series = new JobSeries(DURATION_BUCKETS);
    const jobs = Array.from({ length: 40 }, (_, i) => `j${i}`);
    const gauges = new Map<string, JobGauges>(jobs.map((j, i) => [j, { running: i % 2, lastSuccess: 1_764_000_000.5 + i, nextRun: 1_764_000_060 + i, paused: i === 3 }]));
    for (const j of jobs) series.run(j, "SUCCESS", "schedule", 2);
    const read = () => series.render(jobs, (job, into) => Object.assign(into, gauges.get(job)!));
    const first = read();
    const second = read();
    expect(second.length).toBe(first.length);
    for (let i = 0; i < first.length; i++) expect(Object.is(second[i], first[i]), `piece ${i}`).toBe(true);
    series.run("j35", "FAILED", "manual", 0.3); // the second block of jobs (32 to 39)
    const third = read();
    const changed = third.filter((s, i) => !Object.is(s, first[i])).join("");
    expect(changed).toContain('svc_runs_total{job_name="j35",status="FAILED",trigger="manual"} 1');
    expect(changed).toContain('svc_run_duration_seconds_count{job_name="j35"} 2');
    expect(changed).not.toContain('job_name="j0"');
    expect(changed).not.toContain("svc_job_paused");
  });
});
