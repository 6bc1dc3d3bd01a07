/**
 * GET /metrics over real HTTP against the real engine, store and notifier
 * (src/api/testkit.ts): every sample is checked against what the runs made
 * and against the database, and the series of a job removed by reload go.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeClock } from "../../test/helpers/fakeClock.js";
import { engineKit } from "../../test/helpers/engineKit.js";
import { parseExposition, sampleValue, samplesOf, type Sample } from "../../test/helpers/promText.js";
import { createMetrics } from "./metrics.js";
import { apiKit, type ApiKit } from "./testkit.js";

async function receiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const jobs = (hook: string, withOk = true) => `
jobs:
${withOk ? `  ok:
    command: "echo one; echo two"
` : ""}  bad:
    command: "echo failing >&2; exit 3"
    retries: 1
    retry_delay: fixed:100ms
    notify:
      on_failure: "webhook:${hook}"
  skipper:
    command: "exit 1"
    on_failure: skip
  slow:
    command: "sleep 2.5"
    sla: 1s
  sleeper:
    command: "sleep 30"
  daily:
    command: "true"
    frequency: daily
    time: "0230"
`;

async function scrape(k: ApiKit, path = "/metrics"): Promise<Sample[]> {
  const res = await fetch(k.base + path);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

describe("GET /metrics", () => {
  let k: ApiKit;
  let hook: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    hook = await receiver();
    k = await apiKit(jobs(hook.url));
  });
  afterAll(async () => {
    await k?.close();
    await hook?.close();
  });

  it("counts each run once at its final status, with durations, log lines, SLA breaches and alerts", async () => {
    const ok1 = await k.run("ok");
    await k.waitRun(ok1, ["SUCCESS"]);
    const ok2 = await k.run("ok");
    const bad = await k.run("bad");
    const skipper = await k.run("skipper");
    const slow = await k.run("slow");
    for (const id of [ok2, bad, skipper, slow]) await k.waitRun(id, ["SUCCESS", "FAILED", "SKIPPED"], 20_000);
    expect(k.store.runs.get(bad)).toMatchObject({ status: "FAILED", attempt: 2 }); // failed twice: one run
    await k.notifier.idle();
    k.store.logs.flush();

    const s = await scrape(k);
    const runs = (job: string, status: string) => sampleValue(s, "svc_runs_total", { job_name: job, status, trigger: "manual" });
    expect(runs("ok", "SUCCESS")).toBe(2);
    expect(runs("bad", "FAILED")).toBe(1);
    expect(runs("skipper", "SKIPPED")).toBe(1);
    expect(runs("skipper", "FAILED")).toBeUndefined(); // FAILED -> SKIPPED under on_failure: skip is one run
    expect(runs("slow", "SUCCESS")).toBe(1);
    expect(sampleValue(s, "svc_run_duration_seconds_count", { job_name: "ok" })).toBe(2);
    const okDurations = [ok1, ok2].map((id) => k.store.runs.get(id)!.duration_ms! / 1000);
    expect(sampleValue(s, "svc_run_duration_seconds_sum", { job_name: "ok" })).toBeCloseTo(okDurations[0]! + okDurations[1]!, 6);
    expect(sampleValue(s, "svc_run_duration_seconds_bucket", { job_name: "slow", le: "1" })).toBe(0);
    expect(sampleValue(s, "svc_run_duration_seconds_bucket", { job_name: "slow", le: "5" })).toBe(1);
    expect(sampleValue(s, "svc_run_duration_seconds_bucket", { job_name: "slow", le: "+Inf" })).toBe(1);
    expect(sampleValue(s, "svc_sla_breaches_total", { job_name: "slow" })).toBe(1);
    expect(sampleValue(s, "svc_alerts_total", { provider: "webhook", status: "delivered" })).toBe(1);

    // Log lines: exactly what the database holds, per stream.
    const byStream = { stdout: 0, stderr: 0, healthcheck: 0 };
    for (const id of [ok1, ok2, bad, skipper, slow]) {
      for (const l of k.store.logs.forRun(id, { limit: 10_000, offset: 0 }).lines) byStream[l.stream]++;
    }
    expect(byStream.stderr).toBe(2);
    for (const stream of ["stdout", "stderr", "healthcheck"] as const) {
      expect(sampleValue(s, "svc_log_lines_total", { stream }), stream).toBe(byStream[stream]);
    }
  }, 30_000);

  it("reads the live gauges from the engine and job_state, and the standard process metrics", async () => {
    const sleeping = await k.run("sleeper");
    await k.waitRun(sleeping, ["RUNNING"]);
    expect((await k.post("/api/jobs/daily/pause")).status).toBe(200);
    const s = await scrape(k);
    expect(sampleValue(s, "svc_runs_running", { job_name: "sleeper" })).toBe(1);
    expect(sampleValue(s, "svc_runs_running", { job_name: "ok" })).toBe(0);
    expect(sampleValue(s, "svc_runs_pending")).toBe(0);
    expect(sampleValue(s, "svc_job_paused", { job_name: "daily" })).toBe(1);
    expect(sampleValue(s, "svc_job_paused", { job_name: "ok" })).toBe(0);
    const lastOk = k.store.jobState.get("ok")!.last_success!;
    expect(sampleValue(s, "svc_job_last_success_timestamp_seconds", { job_name: "ok" })).toBe(Date.parse(lastOk) / 1000);
    expect(sampleValue(s, "svc_job_last_success_timestamp_seconds", { job_name: "bad" })).toBeUndefined();
    expect(sampleValue(s, "svc_job_next_run_timestamp_seconds", { job_name: "daily" })).toBe(k.engine.nextRun("daily")!.at / 1000);
    expect(sampleValue(s, "svc_job_next_run_timestamp_seconds", { job_name: "ok" })).toBeUndefined(); // manual
    expect(sampleValue(s, "svc_db_size_bytes")).toBeGreaterThan(4096);
    expect(sampleValue(s, "process_resident_memory_bytes")).toBeGreaterThan(10 * 1024 * 1024);
    expect(sampleValue(s, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect((await k.post("/api/jobs/sleeper/cancel")).status).toBe(200);
    await k.waitRun(sleeping, ["FAILED"]);
    expect((await k.post("/api/jobs/daily/resume")).status).toBe(200);
  });

  it("reads a job's last success again after each of its SUCCESS runs, not only at the first scrape", async () => {
    const before = await scrape(k);
    const first = sampleValue(before, "svc_job_last_success_timestamp_seconds", { job_name: "ok" });
    expect(first).toBe(Date.parse(k.store.jobState.get("ok")!.last_success!) / 1000);
    await new Promise((r) => setTimeout(r, 5)); // a later finish instant, to the millisecond
    await k.waitRun(await k.run("ok"), ["SUCCESS"]);
    const after = await scrape(k);
    const last = k.store.jobState.get("ok")!.last_success!;
    expect(Date.parse(last) / 1000).toBeGreaterThan(first!);
    expect(sampleValue(after, "svc_job_last_success_timestamp_seconds", { job_name: "ok" })).toBe(Date.parse(last) / 1000);
  });

  it("counts reloads by result and drops the series of a job removed by a reload", async () => {
    const before = await scrape(k);
    expect(samplesOf(before, "svc_runs_total").some((x) => x.labels.job_name === "ok")).toBe(true);
    writeFileSync(k.configPath, "jobs: {broken: {command: }}\n");
    expect((await k.post("/api/daemon/reload")).status).toBe(422);
    writeFileSync(k.configPath, jobs(hook.url, false));
    expect((await k.post("/api/daemon/reload")).status).toBe(200);

    const s = await scrape(k);
    expect(sampleValue(s, "svc_config_reloads_total", { result: "failure" })).toBe(1);
    expect(sampleValue(s, "svc_config_reloads_total", { result: "success" })).toBe(1);
    expect(s.filter((x) => x.labels.job_name === "ok")).toEqual([]);
    expect(sampleValue(s, "svc_runs_total", { job_name: "bad", status: "FAILED", trigger: "manual" })).toBe(1);
  });

  it("is documented in the OpenAPI document", async () => {
    const doc = (await k.get<{ paths: Record<string, unknown> }>("/api/openapi.json")).body;
    expect(Object.keys(doc.paths)).toContain("/metrics");
  });
});

describe("GET /metrics: settings", () => {
  it("answers 404 with the setting's name when metrics.enabled is false", async () => {
    const k = await apiKit("jobs:\n  a:\n    command: \"true\"\n", { daemon: "metrics:\n  enabled: false\n" });
    try {
      const res = await k.get<{ error: { code: string; message: string } }>("/metrics");
      expect(res.status).toBe(404);
      expect(res.body.error.message).toContain("metrics.enabled: false");
      expect(k.deps.metrics).toBeNull();
    } finally {
      await k.close();
    }
  });

  it("sits under api.base_path and behind auth and RBAC like every GET", async () => {
    const k = await apiKit("jobs:\n  a:\n    command: \"true\"\n", {
      daemon: "api:\n  base_path: /svc\nauth:\n  type: bearer\n  bearer:\n    token_file: tokens\n",
      files: { tokens: "viewer-token viewer\nnobody-token nobody\n" },
    });
    try {
      const get = (path: string, token?: string) => fetch(k.base + path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
      expect((await get("/svc/metrics")).status).toBe(401);
      const ok = await get("/svc/metrics", "viewer-token");
      expect(ok.status).toBe(200);
      expect(parseExposition(await ok.text()).some((x) => x.name === "svc_info")).toBe(true);
      expect((await get("/svc/metrics", "nobody-token")).status).toBe(403);
      expect((await get("/metrics", "viewer-token")).status).toBe(404);
    } finally {
      await k.close();
    }
  });
});

describe("svc_dispatch_delay_seconds", () => {
  it("observes start minus scheduled instant of scheduled runs (fake clock, real engine)", async () => {
    const start = Date.parse("2027-01-04T09:59:00Z");
    const clock = new FakeClock(start);
    const kit = await engineKit("jobs:\n  h:\n    command: \"true\"\n    frequency: hourly\n    timezone: UTC\n  m:\n    command: \"true\"\n", { clock });
    const metrics = createMetrics({ bus: kit.bus, store: kit.store, engine: kit.engine, project: () => kit.engine.testSeam().ctx.project, databasePath: join(kit.dir, ".svc", "svc.db"), version: "t" });
    try {
      clock.set(Date.parse("2027-01-04T10:00:02.500Z")); // the tick notices the 10:00 slot 2.5 s late
      // Observed when its start is recorded (a turn after the spawn, with posix_spawn off the event loop).
      const run = await kit.waitFor("the scheduled run's start", () => kit.store.runs.recent("h", 1).find((r) => r.status !== "PENDING"));
      kit.engine.runNow("m", { triggeredBy: "test" }); // manual: not a dispatch delay
      const s = parseExposition((await metrics.render()).toString("utf8"));
      expect(run.scheduled_for).toBe("2027-01-04T10:00:00.000Z");
      expect(sampleValue(s, "svc_dispatch_delay_seconds_count")).toBe(1);
      expect(sampleValue(s, "svc_dispatch_delay_seconds_sum")).toBeCloseTo(2.5, 6);
      expect(sampleValue(s, "svc_dispatch_delay_seconds_bucket", { le: "2.5" })).toBe(1);
      expect(sampleValue(s, "svc_dispatch_delay_seconds_bucket", { le: "1" })).toBe(0);
    } finally {
      metrics.close();
      await kit.close();
    }
  });
});
