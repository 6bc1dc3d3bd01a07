/**
 * GET /api/upcoming over real HTTP (src/api/testkit.ts): the slots of every
 * scheduled job from the schedule code `svc next` uses, across the 2027
 * spring-forward night in America/New_York, with excluded slots marked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKit, type ApiKit, type Json } from "./testkit.js";

const YAML = `
defaults:
  timezone: UTC
jobs:
  nightly:
    command: "true"
    frequency: daily
    time: "0230"
    timezone: America/New_York
    tags: [etl]
    exclude: {dates: ["2027-03-15"]}
  half-hourly:
    command: "true"
    frequency: "cron:*/30 * * * *"
    timezone: America/New_York
  berlin:
    command: "true"
    frequency: weekly
    weekday: sun
    time: "0900"
    timezone: Europe/Berlin
    tags: [etl]
  chain:
    command: "true"
    frequency: after:nightly
  by-hand:
    command: "true"
`;

let k: ApiKit;
beforeAll(async () => {
  k = await apiKit(YAML);
});
afterAll(async () => {
  await k?.close();
});

const FROM = "2027-03-13T00:00:00Z";
const of = (body: Json, job: string) => body.slots.filter((s: Json) => s.job === job);

describe("GET /api/upcoming", () => {
  it("lists each scheduled job's slots over the days, strictly after `from`, by instant, with DST notes and excluded slots", async () => {
    const r = await k.get(`/api/upcoming?from=${FROM}&days=3`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ from: "2027-03-13T00:00:00.000Z", to: "2027-03-16T00:00:00.000Z", days: 3, truncated: false, unscheduled: 2 });
    expect(r.body.jobs.map((j: Json) => [j.name, j.timezone, j.paused])).toEqual([
      ["berlin", "Europe/Berlin", false],
      ["half-hourly", "America/New_York", false],
      ["nightly", "America/New_York", false],
    ]);
    expect(of(r.body, "nightly")).toEqual([
      { job: "nightly", at: "2027-03-13T07:30:00.000Z", local: "2027-03-13T02:30:00-05:00 EST", zone_abbr: "EST", note: null, excluded: null },
      {
        job: "nightly",
        at: "2027-03-14T07:00:00.000Z",
        local: "2027-03-14T03:00:00-04:00 EDT",
        zone_abbr: "EDT",
        note: "02:30 does not exist (DST gap): runs at 03:00",
        excluded: null,
      },
      { job: "nightly", at: "2027-03-15T06:30:00.000Z", local: "2027-03-15T02:30:00-04:00 EDT", zone_abbr: "EDT", note: null, excluded: "2027-03-15 in exclude.dates" },
    ]);
    expect(of(r.body, "berlin").map((s: Json) => s.local)).toEqual(["2027-03-14T09:00:00+01:00 CET"]);
    const ats = r.body.slots.map((s: Json) => s.at);
    expect([...ats].sort()).toEqual(ats);
  });

  it("keeps a periodic job's wall clock through the gap (nothing at 02:xx) and caps each job at per_job", async () => {
    const r = await k.get(`/api/upcoming?from=2027-03-14T05:59:59Z&days=1&job=half-hourly&per_job=4`);
    expect(of(r.body, "half-hourly").map((s: Json) => s.local.slice(11, 16) + " " + s.zone_abbr)).toEqual(["01:00 EST", "01:30 EST", "03:00 EDT", "03:30 EDT"]);
    expect(r.body.jobs).toEqual([{ name: "half-hourly", timezone: "America/New_York", frequency: "cron:*/30 * * * * America/New_York", paused: false, slots: 4, more: true }]);
  });

  it("filters by job, tag and name; cuts at `limit`; says which jobs are paused", async () => {
    expect((await k.get(`/api/upcoming?from=${FROM}&days=3&tag=etl`)).body.jobs.map((j: Json) => j.name)).toEqual(["berlin", "nightly"]);
    expect((await k.get(`/api/upcoming?from=${FROM}&days=3&q=NIGHT`)).body.jobs.map((j: Json) => j.name)).toEqual(["nightly"]);
    const cut = await k.get(`/api/upcoming?from=${FROM}&days=3&limit=5`);
    expect(cut.body.truncated).toBe(true);
    expect(cut.body.slots).toHaveLength(5);
    expect(cut.body.slots[0].at).toBe("2027-03-13T00:30:00.000Z");
    expect((await k.post("/api/jobs/nightly/pause")).status).toBe(200);
    const paused = await k.get(`/api/upcoming?from=${FROM}&job=nightly`);
    expect(paused.body.jobs[0]).toMatchObject({ name: "nightly", paused: true });
    await k.post("/api/jobs/nightly/resume");
  });

  it("starts now by default and refuses bad values with the field named", async () => {
    const r = await k.get("/api/upcoming?job=nightly");
    expect(Math.abs(Date.parse(r.body.from) - Date.now())).toBeLessThan(5_000);
    expect(of(r.body, "nightly")).toHaveLength(1);
    const bad = await k.get("/api/upcoming?from=soon");
    expect(bad.status).toBe(400);
    for (const from of ["1", "March%207", "2026-11-24T06:00", "2026-02-30"]) expect((await k.get(`/api/upcoming?from=${from}`)).status, from).toBe(400);
    expect(bad.body.error.message).toContain('"from"');
    expect((await k.get("/api/upcoming?days=8")).status).toBe(400);
    expect((await k.get("/api/upcoming?days=0")).status).toBe(400);
    expect((await k.get("/api/upcoming?per_job=1001")).status).toBe(400);
  });
});
