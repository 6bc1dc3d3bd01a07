/**
 * The backfill routes over real HTTP against the real engine (CONTRACT §7.3):
 * dry run, 202 with counts, 422 per bad field and for over 10,000 slots,
 * GET /api/backfills[/:id] with progress, cancel (409 twice), RBAC as
 * POST /api/jobs/**. Answers are checked against the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { roleKit, type Json, type RoleKit } from "./testkit.js";

const SVC = `
defaults:
  timezone: UTC
jobs:
  hourly:
    command: echo "slot $SVC_SCHEDULED_AT region $SVC_PARAM_REGION key $SVC_PARAM_KEY"; sleep 0.2
    frequency: hourly
    params:
      region: {type: enum, values: [eu, us], default: eu}
      key: {secret: true, default: k-default}
  fast:
    command: "true"
    frequency: every:1m
  manual:
    command: "true"
`;

const DAEMON = `auth:
  type: bearer
  bearer:
    token_file: tokens
  rbac:
    jobs-only: ["GET /**", "POST /api/jobs/**"]
`;
const TOKENS = { admin: "tok-admin-1", viewer: "tok-viewer-2", operator: "tok-operator-3", "jobs-only": "tok-jobs-4" };

let k: RoleKit<keyof typeof TOKENS>;
beforeAll(async () => {
  k = await roleKit(SVC, DAEMON, TOKENS);
});
afterAll(async () => {
  await k?.close();
});

describe("POST /api/jobs/:name/backfill", () => {
  it("dry_run lists the slots and creates nothing", async () => {
    const r = await k.as("operator", "POST", "/api/jobs/hourly/backfill", { from: "2025-01-01T00:00:00Z", to: "2025-01-01T03:00:00Z", dry_run: true });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ job: "hourly", timezone: "UTC", from: "2025-01-01T00:00:00.000Z", to: "2025-01-01T03:00:00.000Z", runs: 3 });
    expect(r.body.slots.map((s: Json) => s.utc)).toEqual(["2025-01-01T00:00:00.000Z", "2025-01-01T01:00:00.000Z", "2025-01-01T02:00:00.000Z"]);
    expect(r.body.slots[0]).toEqual({ utc: "2025-01-01T00:00:00.000Z", local: "2025-01-01T00:00:00+00:00 UTC", note: null, excluded: null, existing_run: null, will_run: true });
    expect((await k.as("admin", "GET", "/api/backfills")).body.total).toBe(0);
  });

  it("202: a backfill whose runs carry the slot, the params (secret ***) and trigger backfill; GET shows its progress", async () => {
    const r = await k.as("operator", "POST", "/api/jobs/hourly/backfill", {
      from: "2025-01-01T00:00:00Z",
      to: "2025-01-01T03:00:00Z",
      reason: "fix of 12 Jan",
      params: { region: "us", key: "k-secret-9" },
    });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ slots: 3, runs: 3, existing: 0, excluded: 0 });
    const id = r.body.backfill_id as number;
    expect(r.body.backfill).toMatchObject({ id, job: "hourly", total: 3, cancelled: false, reason: "fix of 12 Jan", params: { region: "us", key: "***" }, parallel: 1 });
    const done = await k.waitFor("the backfill to finish", () => {
      const b = k.store.backfills.get(id);
      return b?.done ? b : null;
    });
    expect(done.by_status).toEqual({ PENDING: 0, RUNNING: 0, SUCCESS: 3, FAILED: 0, RETRYING: 0, SKIPPED: 0 });
    const one = await k.as("viewer", "GET", `/api/backfills/${id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id, job: "hourly", from: "2025-01-01T00:00:00.000Z", to: "2025-01-01T03:00:00.000Z", total: 3, done: true, cancelled: false });
    expect(one.text).not.toContain("k-secret-9");
    const runs = (await k.as("viewer", "GET", `/api/audit?backfill_id=${id}`)).body.runs as Json[];
    expect(runs.map((x) => x.scheduled_at).sort()).toEqual(["2025-01-01T00:00:00.000Z", "2025-01-01T01:00:00.000Z", "2025-01-01T02:00:00.000Z"]);
    expect(runs.every((x) => x.trigger === "backfill" && x.params.key === "***" && x.params.region === "us")).toBe(true);
    const byTrigger = (await k.as("viewer", "GET", "/api/audit?trigger=backfill")).body;
    expect(byTrigger.total).toBe(3);
    const lines = (await k.as("viewer", "GET", `/api/runs/${runs[0].id}/logs`)).body.lines.map((l: Json) => l.line);
    expect(lines).toContain(`slot ${runs[0].scheduled_at} region us key k-secret-9`);
    const list = await k.as("viewer", "GET", "/api/backfills?job=hourly");
    expect(list.body.backfills.map((b: Json) => b.id)).toEqual([id]);
    expect((await k.as("viewer", "GET", "/api/backfills?job=fast")).body.total).toBe(0);
  });

  it.each([
    [{ from: "yesterday", to: "2025-01-02" }, "from"],
    [{ from: "2025-01-02", to: "2025-01-01" }, "to"],
    [{ from: "2025-01-01", to: "2025-01-02", parallel: 0 }, "parallel"],
    [{ from: "2025-01-01", to: "2025-01-02", params: { region: "mars" } }, "params.region"],
    [{ from: "2025-01-01", to: "2025-01-02", params: { nope: 1 } }, "params.nope"],
  ])("%j: 422 validation_failed at %s, nothing created", async (body, path) => {
    const r = await k.as("operator", "POST", "/api/jobs/hourly/backfill", body);
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("validation_failed");
    expect(r.body.error.details.map((d: Json) => d.path)).toEqual([path]);
  });

  it("over 10,000 slots: 422 at `to`; a job without a schedule: 422 at `job`; unknown job: 404", async () => {
    const many = await k.as("operator", "POST", "/api/jobs/fast/backfill", { from: "2025-01-01", to: "2025-01-08" });
    expect(many.status).toBe(422);
    expect(many.body.error.details[0]).toMatchObject({ path: "to", message: expect.stringMatching(/more than 10,000 slots/) });
    const manual = await k.as("operator", "POST", "/api/jobs/manual/backfill", { from: "2025-01-01", to: "2025-01-08" });
    expect(manual.status).toBe(422);
    expect(manual.body.error.details[0].path).toBe("job");
    // Its path then its message read as one sentence, the job named once.
    expect(manual.body.error.message).toBe("job manual: job has no schedule (frequency manual): a backfill runs a job's scheduled slots");
    expect((await k.as("operator", "POST", "/api/jobs/nope/backfill", { from: "2025-01-01", to: "2025-01-02" })).status).toBe(404);
    expect((await k.as("operator", "POST", "/api/jobs/hourly/backfill", { from: "2025-01-01" })).status).toBe(400);
  });
});

describe("POST /api/backfills/:id/cancel and RBAC", () => {
  it("cancels the waiting runs; twice is 409; unknown is 404; a viewer gets 403, a role with POST /api/jobs/** may", async () => {
    const r = await k.as("jobs-only", "POST", "/api/jobs/hourly/backfill", { from: "2025-02-01T00:00:00Z", to: "2025-02-01T06:00:00Z" });
    expect(r.status).toBe(202);
    const id = r.body.backfill_id;
    expect((await k.as("viewer", "POST", `/api/backfills/${id}/cancel`)).status).toBe(403);
    const c = await k.as("jobs-only", "POST", `/api/backfills/${id}/cancel`);
    expect(c.status).toBe(200);
    expect(c.body.backfill.cancelled).toBe(true);
    expect(c.body.skipped).toBeGreaterThanOrEqual(4);
    expect((await k.as("operator", "POST", `/api/backfills/${id}/cancel`)).status).toBe(409);
    expect((await k.as("operator", "POST", "/api/backfills/9999/cancel")).status).toBe(404);
    expect((await k.as("viewer", "POST", "/api/jobs/hourly/backfill", { from: "2025-01-01", to: "2025-01-02" })).status).toBe(403);
    const b = await k.waitFor("the backfill to settle", () => {
      const x = k.store.backfills.get(id);
      return x?.done ? x : null;
    });
    expect(b.by_status.SKIPPED).toBe(c.body.skipped);
    expect(b.by_status.SUCCESS + b.by_status.SKIPPED).toBe(6);
  });
});
