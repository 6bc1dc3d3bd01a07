/**
 * The per-job series of /metrics, kept in plain maps and written straight
 * to the text format.
 *
 * Why not prom-client's Counter/Histogram/Gauge for these: with 1,000 jobs
 * they are ~20,000 samples, and prom-client's generic formatting (label
 * objects hashed, flattened and escaped per sample, an object per bucket)
 * took ~50 ms of CPU per scrape here, against a 50 ms p99 target. Job names,
 * statuses and triggers are restricted tokens (`[A-Za-z0-9_.-]`), so the
 * labels need no escaping and each sample is one string concatenation.
 * prom-client still serves everything else (the process metrics and the
 * low-cardinality svc_* metrics); `promtool check metrics` checks the whole.
 *
 * Each job's lines are kept as text between scrapes and written again only
 * when that job changed: its counter lines after one of its runs ended, a
 * gauge line when its value differs from the one written last time; each
 * family's text is kept in blocks of 32 jobs, joined again only when a job
 * of the block changed. A scrape of 1,000 jobs where a few jobs ran thus
 * builds a few strings instead of ~21,000 that all lived until the end of
 * the scrape (so V8's young-generation collections copied and promoted
 * them: that was most of the CPU time of a scrape), and hands ~250 flat
 * strings to the answer's buffer instead of one per sample
 * (docs/PERFORMANCE.md, Fixes, "/metrics").
 */

interface JobCounts {
  /** "STATUS trigger" -> runs. */
  runs: Map<string, number>;
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  buckets: number[];
  sum: number;
  count: number;
  sla: number;
  /** The job's lines of svc_runs_total, of the duration histogram and of svc_sla_breaches_total; null once a count moved. */
  runsText: string | null;
  durationText: string | null;
  slaText: string | null;
}

/** What the gauges read at scrape time, per job. */
export interface JobGauges {
  running: number;
  /** Unix seconds, or null (never succeeded). */
  lastSuccess: number | null;
  /** Unix seconds, or null (no schedule). */
  nextRun: number | null;
  paused: boolean;
}

/** A job's gauge values as last written, and their lines ("" for a gauge with no sample). */
interface GaugeLines extends JobGauges {
  /** The scrape that last saw the job in the project (entries of removed jobs are dropped). */
  seen: number;
  runningText: string;
  lastSuccessText: string;
  nextRunText: string;
  pausedText: string;
}

const HELP = {
  runs: "Runs that reached their final status (SUCCESS, FAILED, SKIPPED) since svcd started, by job, status and trigger.",
  duration: "Duration of finished runs that started (first start to end, retries included), by job.",
  sla: "Runs that passed their job's sla while running, by job.",
  running: "Runs RUNNING now, by job.",
  lastSuccess: "When the job's last successful run finished (Unix time); absent for a job that never succeeded.",
  nextRun: "The job's next scheduled instant (Unix time); absent for manual and after: jobs.",
  paused: "1 when the job is paused, else 0.",
};

const HEAD = {
  runs: family("svc_runs_total", "counter", HELP.runs),
  duration: family("svc_run_duration_seconds", "histogram", HELP.duration),
  sla: family("svc_sla_breaches_total", "counter", HELP.sla),
  running: family("svc_runs_running", "gauge", HELP.running),
  lastSuccess: family("svc_job_last_success_timestamp_seconds", "gauge", HELP.lastSuccess),
  nextRun: family("svc_job_next_run_timestamp_seconds", "gauge", HELP.nextRun),
  paused: family("svc_job_paused", "gauge", HELP.paused),
};

export class JobSeries {
  private readonly jobs = new Map<string, JobCounts>();
  private readonly gauges = new Map<string, GaugeLines>();
  private readonly le: string[];
  private scrape = 0;
  /** The gauge entries of the project's jobs in project order, refilled by each render. */
  private readonly order: GaugeLines[] = [];
  private readonly read: JobGauges = { running: 0, lastSuccess: null, nextRun: null, paused: false };
  /** The seven families, in the order they are written. */
  private readonly blocks = Array.from({ length: 7 }, () => new Blocks());

  constructor(private readonly bounds: readonly number[]) {
    this.le = [...bounds.map(String), "+Inf"];
  }

  private of(job: string): JobCounts {
    let c = this.jobs.get(job);
    if (!c) {
      c = { runs: new Map(), buckets: new Array<number>(this.le.length).fill(0), sum: 0, count: 0, sla: 0, runsText: null, durationText: null, slaText: null };
      this.jobs.set(job, c);
    }
    return c;
  }

  run(job: string, status: string, trigger: string, durationS: number | null): void {
    const c = this.of(job);
    const key = `${status} ${trigger}`;
    c.runs.set(key, (c.runs.get(key) ?? 0) + 1);
    c.runsText = null;
    if (durationS === null) return;
    let i = 0;
    while (i < this.bounds.length && durationS > this.bounds[i]!) i++;
    c.buckets[i]!++;
    c.sum += durationS;
    c.count++;
    c.durationText = null;
  }

  slaBreach(job: string): void {
    const c = this.of(job);
    c.sla++;
    c.slaText = null;
  }

  /** Drops the counters of every job not in `keep` (a reload removed them); render drops their gauges. */
  retain(keep: ReadonlyMap<string, unknown>): void {
    for (const job of this.jobs.keys()) if (!keep.has(job)) this.jobs.delete(job);
  }

  /**
   * The text of every per-job family: counters from the maps, gauges of the
   * project's `jobs` (in that order) from `gauge`, which fills the object it
   * is given with one job's values. Returns the pieces, to be joined.
   */
  render(jobs: Iterable<string>, gauge: (job: string, into: JobGauges) => void): string[] {
    const [runs, duration, sla, running, lastSuccess, nextRun, paused] = this.blocks;
    const out: string[] = [];
    const pieces: string[] = [];
    for (const [job, c] of this.jobs) {
      if (c.runsText === null) {
        let text = "";
        for (const [key, n] of c.runs) {
          const sp = key.indexOf(" ");
          text += `svc_runs_total{job_name="${job}",status="${key.slice(0, sp)}",trigger="${key.slice(sp + 1)}"} ${n}\n`;
        }
        c.runsText = text;
      }
      pieces.push(c.runsText);
    }
    runs!.write(out, HEAD.runs, pieces);
    for (const [job, c] of this.jobs) {
      if (c.count === 0) continue;
      if (c.durationText === null) {
        let text = "";
        let cumulative = 0;
        for (let i = 0; i < this.le.length; i++) {
          cumulative += c.buckets[i]!;
          text += `svc_run_duration_seconds_bucket{job_name="${job}",le="${this.le[i]}"} ${cumulative}\n`;
        }
        c.durationText = `${text}svc_run_duration_seconds_sum{job_name="${job}"} ${c.sum}\nsvc_run_duration_seconds_count{job_name="${job}"} ${c.count}\n`;
      }
      pieces.push(c.durationText);
    }
    duration!.write(out, HEAD.duration, pieces);
    for (const [job, c] of this.jobs) {
      if (c.sla === 0) continue;
      if (c.slaText === null) c.slaText = `svc_sla_breaches_total{job_name="${job}"} ${c.sla}\n`;
      pieces.push(c.slaText);
    }
    sla!.write(out, HEAD.sla, pieces);

    const scrape = ++this.scrape;
    const order = this.order;
    order.length = 0;
    const g = this.read;
    for (const job of jobs) {
      g.running = 0;
      g.lastSuccess = null;
      g.nextRun = null;
      g.paused = false;
      gauge(job, g);
      let e = this.gauges.get(job);
      if (!e) {
        e = { running: Number.NaN, lastSuccess: Number.NaN, nextRun: Number.NaN, paused: false, seen: 0, runningText: "", lastSuccessText: "", nextRunText: "", pausedText: "" };
        this.gauges.set(job, e);
        e.pausedText = `svc_job_paused{job_name="${job}"} 0\n`;
      }
      e.seen = scrape;
      if (e.running !== g.running) {
        e.running = g.running;
        e.runningText = `svc_runs_running{job_name="${job}"} ${g.running}\n`;
      }
      if (e.lastSuccess !== g.lastSuccess) {
        e.lastSuccess = g.lastSuccess;
        e.lastSuccessText = g.lastSuccess === null ? "" : `svc_job_last_success_timestamp_seconds{job_name="${job}"} ${g.lastSuccess}\n`;
      }
      if (e.nextRun !== g.nextRun) {
        e.nextRun = g.nextRun;
        e.nextRunText = g.nextRun === null ? "" : `svc_job_next_run_timestamp_seconds{job_name="${job}"} ${g.nextRun}\n`;
      }
      if (e.paused !== g.paused) {
        e.paused = g.paused;
        e.pausedText = `svc_job_paused{job_name="${job}"} ${g.paused ? 1 : 0}\n`;
      }
      order.push(e);
    }
    if (this.gauges.size > order.length) for (const [job, e] of this.gauges) if (e.seen !== scrape) this.gauges.delete(job);

    for (const e of order) pieces.push(e.runningText);
    running!.write(out, HEAD.running, pieces);
    for (const e of order) if (e.lastSuccessText !== "") pieces.push(e.lastSuccessText);
    lastSuccess!.write(out, HEAD.lastSuccess, pieces);
    for (const e of order) if (e.nextRunText !== "") pieces.push(e.nextRunText);
    nextRun!.write(out, HEAD.nextRun, pieces);
    for (const e of order) pieces.push(e.pausedText);
    paused!.write(out, HEAD.paused, pieces);
    return out;
  }
}

/**
 * One family's text in blocks of BLOCK jobs: a block's joined text is kept
 * while its pieces are the same strings, so a scrape hands on ~30 strings per
 * family rather than one per job (and the joined text is flat: one copy into
 * the answer).
 */
const BLOCK = 32;

class Blocks {
  private readonly pieces: string[][] = [];
  private readonly texts: string[] = [];

  /** Appends the family's header and its blocks to `out`, and empties `pieces`. */
  write(out: string[], head: string, pieces: string[]): void {
    out.push(head);
    let b = 0;
    for (let i = 0; i < pieces.length; i += BLOCK, b++) {
      const end = Math.min(i + BLOCK, pieces.length);
      const kept = this.pieces[b];
      let same = kept !== undefined && kept.length === end - i;
      for (let j = i; same && j < end; j++) same = kept![j - i] === pieces[j];
      if (!same) {
        const block = pieces.slice(i, end);
        this.pieces[b] = block;
        this.texts[b] = block.join("");
      }
      out.push(this.texts[b]!);
    }
    this.pieces.length = b;
    this.texts.length = b;
    pieces.length = 0;
  }
}

function family(name: string, type: string, help: string): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`;
}
