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
 * Each family's text is kept between scrapes in blocks of 32 jobs, and a
 * block is written again only when one of its jobs changed: a run of it
 * ended (its counters), a gauge value differs from the one written last
 * time, or the block's jobs are not the same (a job came, went, or started
 * to have a sample). A scrape of 1,000 jobs where a few jobs ran thus builds
 * a few hundred strings instead of ~21,000 that all lived until the end of
 * the scrape (so V8's young-generation collections copied and promoted
 * them: that was most of the CPU time of a scrape), and hands ~250 flat
 * strings to the answer's buffer instead of one per sample. Only the
 * blocks' text is kept, about the size of the answer (docs/PERFORMANCE.md,
 * Fixes, "/metrics").
 */

/** Anything a block is made of: a job's counters or gauges, and a number that changes whenever their text would. */
interface Versioned {
  readonly job: string;
  version: number;
}

interface JobCounts extends Versioned {
  /** "STATUS trigger" -> runs. */
  runs: Map<string, number>;
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  buckets: number[];
  sum: number;
  count: number;
  sla: number;
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

/** A job's gauge values as last written. */
interface GaugeEntry extends JobGauges, Versioned {
  /** The scrape that last saw the job in the project (entries of removed jobs are dropped). */
  seen: number;
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

export class JobSeries {
  private readonly jobs = new Map<string, JobCounts>();
  private readonly gauges = new Map<string, GaugeEntry>();
  private readonly le: string[];
  private scrape = 0;
  private readonly read: JobGauges = { running: 0, lastSuccess: null, nextRun: null, paused: false };
  private readonly counted: JobCounts[] = [];
  private readonly order: GaugeEntry[] = [];
  private readonly some: GaugeEntry[] = [];
  private readonly families: {
    runs: Blocks<JobCounts>;
    duration: Blocks<JobCounts>;
    sla: Blocks<JobCounts>;
    running: Blocks<GaugeEntry>;
    lastSuccess: Blocks<GaugeEntry>;
    nextRun: Blocks<GaugeEntry>;
    paused: Blocks<GaugeEntry>;
  };

  constructor(private readonly bounds: readonly number[]) {
    const le = (this.le = [...bounds.map(String), "+Inf"]);
    this.families = {
      runs: new Blocks("svc_runs_total", "counter", HELP.runs, (c) => {
        let text = "";
        for (const [key, n] of c.runs) {
          const sp = key.indexOf(" ");
          text += `svc_runs_total{job_name="${c.job}",status="${key.slice(0, sp)}",trigger="${key.slice(sp + 1)}"} ${n}\n`;
        }
        return text;
      }),
      duration: new Blocks("svc_run_duration_seconds", "histogram", HELP.duration, (c) => {
        let text = "";
        let cumulative = 0;
        for (let i = 0; i < le.length; i++) {
          cumulative += c.buckets[i]!;
          text += `svc_run_duration_seconds_bucket{job_name="${c.job}",le="${le[i]}"} ${cumulative}\n`;
        }
        return `${text}svc_run_duration_seconds_sum{job_name="${c.job}"} ${c.sum}\nsvc_run_duration_seconds_count{job_name="${c.job}"} ${c.count}\n`;
      }),
      sla: new Blocks("svc_sla_breaches_total", "counter", HELP.sla, (c) => `svc_sla_breaches_total{job_name="${c.job}"} ${c.sla}\n`),
      running: new Blocks("svc_runs_running", "gauge", HELP.running, (g) => `svc_runs_running{job_name="${g.job}"} ${g.running}\n`),
      lastSuccess: new Blocks("svc_job_last_success_timestamp_seconds", "gauge", HELP.lastSuccess, (g) => `svc_job_last_success_timestamp_seconds{job_name="${g.job}"} ${g.lastSuccess}\n`),
      nextRun: new Blocks("svc_job_next_run_timestamp_seconds", "gauge", HELP.nextRun, (g) => `svc_job_next_run_timestamp_seconds{job_name="${g.job}"} ${g.nextRun}\n`),
      paused: new Blocks("svc_job_paused", "gauge", HELP.paused, (g) => `svc_job_paused{job_name="${g.job}"} ${g.paused ? 1 : 0}\n`),
    };
  }

  private of(job: string): JobCounts {
    let c = this.jobs.get(job);
    if (!c) {
      c = { job, version: 0, runs: new Map(), buckets: new Array<number>(this.le.length).fill(0), sum: 0, count: 0, sla: 0 };
      this.jobs.set(job, c);
    }
    return c;
  }

  run(job: string, status: string, trigger: string, durationS: number | null): void {
    const c = this.of(job);
    const key = `${status} ${trigger}`;
    c.runs.set(key, (c.runs.get(key) ?? 0) + 1);
    c.version++;
    if (durationS === null) return;
    let i = 0;
    while (i < this.bounds.length && durationS > this.bounds[i]!) i++;
    c.buckets[i]!++;
    c.sum += durationS;
    c.count++;
  }

  slaBreach(job: string): void {
    const c = this.of(job);
    c.sla++;
    c.version++;
  }

  /** Drops the counters of every job not in `keep` (a reload removed them); render drops their gauges. */
  retain(keep: ReadonlyMap<string, unknown>): void {
    for (const job of this.jobs.keys()) if (!keep.has(job)) this.jobs.delete(job);
  }

  /**
   * The text of every per-job family: counters from the maps (jobs in the
   * order they were first counted), gauges of the project's `jobs` (in that
   * order) from `gauge`, which fills the object it is given with one job's
   * values. Returns the pieces, to be joined.
   */
  render(jobs: Iterable<string>, gauge: (job: string, into: JobGauges) => void): string[] {
    const f = this.families;
    const out: string[] = [];
    const counted = this.counted;
    for (const c of this.jobs.values()) counted.push(c);
    f.runs.write(out, counted);
    counted.length = 0;
    for (const c of this.jobs.values()) if (c.count > 0) counted.push(c);
    f.duration.write(out, counted);
    counted.length = 0;
    for (const c of this.jobs.values()) if (c.sla > 0) counted.push(c);
    f.sla.write(out, counted);
    counted.length = 0;

    const scrape = ++this.scrape;
    const order = this.order;
    const g = this.read;
    for (const job of jobs) {
      g.running = 0;
      g.lastSuccess = null;
      g.nextRun = null;
      g.paused = false;
      gauge(job, g);
      let e = this.gauges.get(job);
      if (!e) {
        e = { job, version: 0, seen: 0, running: g.running, lastSuccess: g.lastSuccess, nextRun: g.nextRun, paused: g.paused };
        this.gauges.set(job, e);
      } else if (e.running !== g.running || e.lastSuccess !== g.lastSuccess || e.nextRun !== g.nextRun || e.paused !== g.paused) {
        e.running = g.running;
        e.lastSuccess = g.lastSuccess;
        e.nextRun = g.nextRun;
        e.paused = g.paused;
        e.version++;
      }
      e.seen = scrape;
      order.push(e);
    }
    if (this.gauges.size > order.length) for (const [job, e] of this.gauges) if (e.seen !== scrape) this.gauges.delete(job);

    const some = this.some;
    f.running.write(out, order);
    for (const e of order) if (e.lastSuccess !== null) some.push(e);
    f.lastSuccess.write(out, some);
    some.length = 0;
    for (const e of order) if (e.nextRun !== null) some.push(e);
    f.nextRun.write(out, some);
    some.length = 0;
    f.paused.write(out, order);
    order.length = 0;
    return out;
  }
}

/** Jobs per block of kept text. */
const BLOCK = 32;

/**
 * One family's text in blocks of BLOCK jobs. A block's text is kept while
 * it is made of the same entries at the same versions; otherwise it is
 * written again from them.
 */
class Blocks<E extends Versioned> {
  private readonly head: string;
  private readonly entries: E[][] = [];
  private readonly versions: number[][] = [];
  private readonly texts: string[] = [];

  constructor(
    name: string,
    type: string,
    help: string,
    private readonly lines: (e: E) => string,
  ) {
    this.head = `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`;
  }

  /** Appends the family's header and its blocks for `list` (in order) to `out`. */
  write(out: string[], list: readonly E[]): void {
    out.push(this.head);
    let b = 0;
    for (let i = 0; i < list.length; i += BLOCK, b++) {
      const end = Math.min(i + BLOCK, list.length);
      const kept = this.entries[b];
      const versions = this.versions[b];
      let same = kept !== undefined && kept.length === end - i;
      for (let j = i; same && j < end; j++) same = kept![j - i] === list[j] && versions![j - i] === list[j]!.version;
      if (!same) {
        const block = list.slice(i, end);
        this.entries[b] = block;
        this.versions[b] = block.map((e) => e.version);
        // join makes one flat string (not a tree of the pieces): the block costs its length and is one copy when written out.
        this.texts[b] = block.map(this.lines).join("");
      }
      out.push(this.texts[b]!);
    }
    this.entries.length = b;
    this.versions.length = b;
    this.texts.length = b;
  }
}

