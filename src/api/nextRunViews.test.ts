import { afterAll, describe, expect, it } from "vitest";
import { loadProject } from "../config/index.js";
import { nextRun, nextRuns, nextSlot } from "../schedule/nextRun.js";
import { apiKit, type ApiKit } from "./testkit.js";

/**
 * Every place a next run shows uses the schedule module's answer (issue 20):
 * GET /api/jobs (svc status and the dashboard read it), GET /api/jobs/:name,
 * GET /api/db/state and job_state agree with nextRun() (what `svc next`
 * prints), with exclusions skipped, for cron:, every: and a named frequency.
 */
const DAY = 86_400_000;
const today = new Date(Date.now()).toISOString().slice(0, 10);
const tomorrow = new Date(Date.now() + DAY).toISOString().slice(0, 10);

const yaml = `
defaults:
  timezone: UTC
jobs:
  skipped:
    command: "true"
    frequency: "cron:0 6 * * *"
    exclude: {dates: ["${today}", "${tomorrow}"]}
  fast:
    command: "true"
    frequency: "every:10m"
  daily:
    command: "true"
    frequency: daily
    time: "0630"
`;

let k: ApiKit;
afterAll(async () => {
  await k?.close();
});

describe("next run in every view", () => {
  it("GET /api/jobs, /api/jobs/:name, /api/db/state and job_state show the schedule module's next slot that runs", async () => {
    k = await apiKit(yaml);
    const loaded = loadProject(k.configPath);
    if (!loaded.ok) throw new Error("the test's svc.yaml does not load");
    const jobs = loaded.value.jobs;
    const list = (await k.get("/api/jobs")).body.jobs as { name: string; next_run: string | null }[];
    const now = Date.now();
    for (const job of jobs.values()) {
      // The slot after "a moment ago": the daemon computed it at startup, just before `now`.
      const want = nextRun(job.schedule, now - 60_000)!;
      const shown = list.find((j) => j.name === job.name)!.next_run;
      expect([want.utc, nextRun(job.schedule, want.at)!.utc], job.name).toContain(shown);
      expect(k.store.jobState.get(job.name)!.next_run, job.name).toBe(shown);
      const state = (await k.get(`/api/db/state?page_size=100`)).body.rows.find((r: { job_name: string }) => r.job_name === job.name);
      expect(state.next_run).toBe(shown);
      expect(state.next_run_local).toBe(nextRuns(job.schedule, Date.parse(shown!) - 1, 1)[0]!.local);
    }
    // The excluded days are skipped: the next run is two days out at the earliest, and its slot is not excluded.
    const skipped = list.find((j) => j.name === "skipped")!.next_run!;
    expect(skipped.slice(0, 10) > tomorrow).toBe(true);
    expect(nextSlot(jobs.get("skipped")!.schedule, Date.parse(skipped) - 1)!.excluded).toBeNull();
    const one = (await k.get("/api/jobs/skipped")).body;
    expect(one.state.next_run).toBe(skipped);
  });
});
