/**
 * The notifier's delivery rules (CONTRACT §6), in process: alert rows,
 * attempts and backoff, timeouts, alert retry, resume after restart, event
 * rules, test deliveries, and that delivery never blocks the emitter. Real
 * SQLite store, real HTTP receiver and SMTP server on 127.0.0.1:0; the 1 s /
 * 2 s backoff is a recorded fake sleep except in one real-time check.
 * Through the built daemon: test/e2e/daemon-lifecycle.test.ts (a hanging
 * receiver does not delay dispatch). How fast emits return and how late
 * timers fire meanwhile: bench/isolation.bench.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { realSleep } from "./deliver.js";
import { ConflictError, NotFoundError } from "../store/errors.js";
import {
  entry,
  harness,
  integration,
  job,
  startMailServer,
  startReceiver,
  until,
  type Harness,
  type HarnessOptions,
  type MailServer,
  type Receiver,
} from "./testkit.js";

let rx: Receiver;
const open: Harness[] = [];

beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(() => rx.close());
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
  rx.received.length = 0;
  rx.script.length = 0;
  rx.fallback = { status: 200, body: { ok: true } };
});

async function chatHarness(more: Partial<HarnessOptions> = {}): Promise<Harness> {
  const h = await harness({
    jobs: [job("backup", { notify: { on_failure: [entry("ops-chat:#data")] } })],
    integrations: [integration("ops-chat", { provider: "chat", webhookUrl: `${rx.url}/hook/T0/SECRET-PATH?token=SECRET-Q` })],
    ...more,
  });
  open.push(h);
  return h;
}

describe("attempts and backoff", () => {
  it("retries a 500 then succeeds: 2 attempts recorded, waited 1 s", async () => {
    const h = await chatHarness();
    rx.script.push({ status: 500, body: { err: "down" } }, { status: 200 });
    await h.emit("on_failure", h.newRun("backup"));
    expect(rx.received).toHaveLength(2);
    expect(rx.received[1]!.body).toStrictEqual(rx.received[0]!.body);
    expect(h.sleeps).toEqual([1000]);
    expect(h.alerts()).toMatchObject([{ status: "delivered", attempts: 2, error: null }]);
  });

  it("fails permanently after 3 attempts, waiting 1 s then 2 s, with the last error", async () => {
    const h = await chatHarness();
    rx.fallback = { status: 503, body: { err: "maintenance" } };
    await h.emit("on_failure", h.newRun("backup"));
    expect(rx.received).toHaveLength(3);
    expect(h.sleeps).toEqual([1000, 2000]);
    const [a] = h.alerts();
    expect(a).toMatchObject({ status: "failed", attempts: 3 });
    expect(a!.error).toBe(`POST ${rx.url}: HTTP 503: {"err":"maintenance"}`);
    expect(a!.last_attempt_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("does not retry a 4xx other than 429", async () => {
    const h = await chatHarness();
    rx.script.push({ status: 404, body: { err: "no such hook" } });
    await h.emit("on_failure", h.newRun("backup"));
    expect(rx.received).toHaveLength(1);
    expect(h.sleeps).toEqual([]);
    expect(h.alerts()).toMatchObject([{ status: "failed", attempts: 1, error: `POST ${rx.url}: HTTP 404: {"err":"no such hook"}` }]);
  });

  it("retries a 429", async () => {
    const h = await chatHarness();
    rx.script.push({ status: 429 }, { status: 200 });
    await h.emit("on_failure", h.newRun("backup"));
    expect(rx.received).toHaveLength(2);
    expect(h.alerts()).toMatchObject([{ status: "delivered", attempts: 2 }]);
  });

  it("times out a receiver that hangs: failed with a clear error", async () => {
    const h = await chatHarness({ notifier: { httpTimeoutMs: 150 } });
    rx.fallback = "hang";
    await h.emit("on_failure", h.newRun("backup"));
    expect(rx.received).toHaveLength(3);
    expect(h.alerts()).toMatchObject([
      { status: "failed", attempts: 3, error: `POST ${rx.url}: no response within 150 ms (timed out)` },
    ]);
  });

  it("waits at least 1 s in real time before the second attempt", async () => {
    const h = await chatHarness({ notifier: { sleep: realSleep } });
    rx.script.push({ status: 500 }, { status: 200 });
    await h.emit("on_failure", h.newRun("backup"));
    expect(rx.received).toHaveLength(2);
    const gap = rx.received[1]!.at - rx.received[0]!.at;
    // The wait starts after the first answer reached the notifier, so the gap is at least the 1 s (less the
    // receiver's own clock rounding). Which delay each attempt asks for is checked exactly with the
    // recorded sleep above; the upper bound here only catches a unit slip (1,000 s) or a lost timer,
    // with room for a loaded machine's stalls.
    expect(gap).toBeGreaterThanOrEqual(990);
    expect(gap).toBeLessThan(10_000);
  });

  it("never writes the webhook URL's path or query, or other secrets, to alert rows or logs", async () => {
    const h = await chatHarness();
    rx.fallback = { status: 500, body: { echo: `${rx.url}/hook/T0/SECRET-PATH?token=SECRET-Q` } };
    await h.emit("on_failure", h.newRun("backup"));
    const [a] = h.alerts();
    expect(a!.status).toBe("failed");
    expect(JSON.stringify(a)).not.toMatch(/SECRET/);
    expect(JSON.stringify(h.log.entries)).not.toMatch(/SECRET/);
    expect(h.log.entries.filter((e) => e.level === "warn").map((e) => e.msg)).toEqual([
      expect.stringContaining("notification attempt 1 failed"),
      expect.stringContaining("notification attempt 2 failed"),
      expect.stringContaining("notification attempt 3 failed"),
    ]);
  });

  it("fails an alert whose integration has unset credentials, naming the variable", async () => {
    const h = await harness({
      jobs: [job("backup", { notify: { on_failure: [entry("ops-chat:#data")] } })],
      integrations: [integration("ops-chat", { provider: "chat", credentialStatus: "env var unset", unsetVars: ["CHAT_URL"] })],
    });
    open.push(h);
    await h.emit("on_failure", h.newRun("backup"));
    expect(h.alerts()).toMatchObject([
      { status: "failed", attempts: 1, error: 'integration "ops-chat" (chat): env var unset: CHAT_URL; nothing is sent until it is set (and svcd reloaded)' },
    ]);
  });

  it("a pager whose webhook_url's variable is unset sends nothing (not its routing key to PagerDuty's public endpoint)", async () => {
    const h = await harness({
      jobs: [job("backup", { notify: { on_failure: [entry("oncall:p1")] } })],
      integrations: [integration("oncall", { provider: "pager", routingKey: "RK-live-123", webhookUrl: null, credentialStatus: "env var unset", unsetVars: ["PD_PROXY"] })],
    });
    open.push(h);
    await h.emit("on_failure", h.newRun("backup"));
    expect(h.alerts()).toMatchObject([
      { status: "failed", attempts: 1, error: 'integration "oncall" (pager): env var unset: PD_PROXY; nothing is sent until it is set (and svcd reloaded)' },
    ]);
  });

  it("records a failed alert when the channel no longer resolves (integration removed by a reload)", async () => {
    const h = await harness({ jobs: [job("backup", { notify: { on_failure: [entry("gone:#x")] } })], integrations: [] });
    open.push(h);
    await h.emit("on_failure", h.newRun("backup"));
    expect(h.alerts()).toMatchObject([{ status: "failed", error: expect.stringContaining('unknown integration or provider "gone"') }]);
  });
});

describe("alert retry", () => {
  it("404 for an unknown id", async () => {
    const h = await chatHarness();
    expect(() => h.notifier.retryAlert(999)).toThrow(NotFoundError);
  });

  it("409 while pending, then re-delivers the stored payload without a new run", async () => {
    const h = await chatHarness({ notifier: { httpTimeoutMs: 2000 } });
    rx.script.push({ status: 400 }, { status: 200, delayMs: 200 });
    const run = h.newRun("backup");
    await h.emit("on_failure", run);
    const [failed] = h.alerts();
    expect(failed).toMatchObject({ status: "failed", attempts: 1 });

    const requeued = h.notifier.retryAlert(failed!.id);
    expect(requeued).toMatchObject({ id: failed!.id, status: "pending" });
    expect(() => h.notifier.retryAlert(failed!.id)).toThrow(ConflictError);
    await h.notifier.idle();

    expect(rx.received).toHaveLength(2);
    expect(rx.received[1]!.body).toStrictEqual(rx.received[0]!.body);
    expect(h.alerts()).toMatchObject([{ id: failed!.id, status: "delivered", attempts: 2, error: null }]);
    expect(h.store.runs.recent("backup", 10)).toHaveLength(1);
    // Only failed alerts are re-dispatched.
    expect(() => h.notifier.retryAlert(failed!.id)).toThrow(ConflictError);
  });
});

describe("restart", () => {
  it("resumes alerts left pending by a previous notifier on the same database file", async () => {
    rx.fallback = "hang";
    const first = await chatHarness({ notifier: { httpTimeoutMs: 10_000, stopTimeoutMs: 50 } });
    const run = first.newRun("backup");
    first.emitOnly("on_failure", run);
    await until(() => rx.received.length === 1);
    const t0 = Date.now();
    await first.notifier.stop(); // bounded: cuts the hung request, leaves the row pending
    // A stop that waited for the hung request would take its 10 s timeout; the bound is half of it,
    // 100 times the 50 ms stop timeout, far beyond any stall of a loaded machine.
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(first.alerts()).toMatchObject([{ status: "pending", attempts: 0 }]);
    await first.close({ keepFiles: true });
    open.splice(open.indexOf(first), 1);

    rx.fallback = { status: 200 };
    const second = await chatHarness({ dbPath: first.dbPath });
    await until(() => second.alerts()[0]?.status === "delivered");
    expect(rx.received).toHaveLength(2);
    expect(rx.received[1]!.body).toStrictEqual(rx.received[0]!.body);
    expect(second.log.entries.some((e) => e.msg === "resuming pending notifications")).toBe(true);
  });

  it("stop() is bounded and safe to call twice", async () => {
    rx.fallback = "hang";
    const h = await chatHarness({ notifier: { httpTimeoutMs: 10_000, stopTimeoutMs: 100 } });
    h.emitOnly("on_failure", h.newRun("backup"));
    await until(() => rx.received.length === 1);
    const t0 = Date.now();
    await Promise.all([h.notifier.stop(), h.notifier.stop()]);
    // As above: half the hung request's 10 s timeout, 50 times the 100 ms stop timeout.
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(h.alerts()).toMatchObject([{ status: "pending", attempts: 0 }]);
  });
});

describe("event rules", () => {
  it("on_success with only_after_failure fires only after a FAILED run", async () => {
    const h = await harness({
      jobs: [
        job("sync", {
          notify: { on_success: [entry("ops-chat:#always"), entry("ops-chat:#recovered", { onlyAfterFailure: true })] },
        }),
      ],
      integrations: [integration("ops-chat", { provider: "chat", webhookUrl: `${rx.url}/chat` })],
    });
    open.push(h);
    await h.emit("on_success", h.newRun("sync", { status: "SUCCESS" }), { previousStatus: "SUCCESS" });
    expect(rx.received.map((r) => (r.body as { channel: string }).channel)).toEqual(["#always"]);
    rx.received.length = 0;
    await h.emit("on_success", h.newRun("sync", { status: "SUCCESS" }), { previousStatus: "FAILED" });
    expect(rx.received.map((r) => (r.body as { channel: string }).channel).sort()).toEqual(["#always", "#recovered"]);
  });

  it("on_sla_breach falls back to on_failure entries when it has none", async () => {
    const h = await harness({
      jobs: [
        job("slow", { notify: { on_failure: [entry("ops-chat:#fail", { message: "{{ event }}: {{ job.name }} sla {{ run.sla_breached }}" })] } }),
        job("slow2", { notify: { on_failure: [entry("ops-chat:#fail")], on_sla_breach: [entry("ops-chat:#sla")] } }),
      ],
      integrations: [integration("ops-chat", { provider: "chat", webhookUrl: `${rx.url}/chat` })],
    });
    open.push(h);
    await h.emit("on_sla_breach", h.newRun("slow", { status: "RUNNING", sla_breached: 1 }), { fallbackToFailure: false });
    expect(rx.received).toHaveLength(0);
    await h.emit("on_sla_breach", h.newRun("slow", { status: "RUNNING", sla_breached: 1 }), { fallbackToFailure: true });
    expect(rx.received.map((r) => r.body)).toEqual([{ channel: "#fail", text: "on_sla_breach: slow sla 1" }]);
    expect(h.alerts()).toMatchObject([{ event: "on_sla_breach", channel: "ops-chat:#fail", status: "delivered" }]);
    rx.received.length = 0;
    await h.emit("on_sla_breach", h.newRun("slow2", { status: "RUNNING" }), { fallbackToFailure: true });
    expect(rx.received.map((r) => (r.body as { channel: string }).channel)).toEqual(["#sla"]);
  });

  it("warns about an unknown template variable and still delivers", async () => {
    const h = await harness({
      jobs: [job("backup", { notify: { on_failure: [entry("ops-chat:#x", { message: "{{ job.name }} {{ job.owner }}!" })] } })],
      integrations: [integration("ops-chat", { provider: "chat", webhookUrl: `${rx.url}/chat` })],
    });
    open.push(h);
    await h.emit("on_failure", h.newRun("backup"));
    expect(rx.received.map((r) => r.body)).toEqual([{ channel: "#x", text: "backup !" }]);
    const warn = h.log.entries.find((e) => e.level === "warn");
    expect(warn).toMatchObject({ fields: { job: "backup", variable: "job.owner" } });
    expect(warn!.msg).toContain("unknown template variable {{ job.owner }}");
  });

  it("ignores events of jobs without entries and of jobs gone from the config", async () => {
    const h = await chatHarness();
    await h.emit("on_retry", h.newRun("backup"));
    const other = h.newRun("backup");
    await h.emit("on_failure", { ...other, job_name: "removed" });
    expect(rx.received).toHaveLength(0);
    expect(h.alerts()).toHaveLength(0);
  });
});

describe("never blocks the emitter", () => {
  it("emitting 100 events while the receiver sleeps returns at once and keeps the event loop free", async () => {
    // The receiver answers each request after 10 s. An emit that waited for its delivery, or a delivery that
    // held the event loop, would take about that long: each bound below is half of it, hundreds of times what
    // a correct notifier needs (the figures: bench/isolation.bench.ts), so a loaded machine cannot reach it.
    const RECEIVER_DELAY_MS = 10_000;
    const BOUND_MS = RECEIVER_DELAY_MS / 2;
    const h = await chatHarness({ notifier: { httpTimeoutMs: 20_000, stopTimeoutMs: 100 } });
    rx.fallback = { status: 200, delayMs: RECEIVER_DELAY_MS };
    const runs = Array.from({ length: 100 }, () => h.newRun("backup"));
    const t0 = performance.now();
    for (const run of runs) h.emitOnly("on_failure", run);
    expect(performance.now() - t0).toBeLessThan(BOUND_MS);

    // While deliveries are in flight, a timer still fires.
    await until(() => rx.received.length >= 16);
    const t1 = performance.now();
    await new Promise((r) => setTimeout(r, 20));
    expect(performance.now() - t1).toBeLessThan(BOUND_MS);
    // All 100 rows were written pending before their first attempt.
    await until(() => h.alerts().length === 100);
    expect(h.alerts().every((a) => a.status === "pending")).toBe(true);
  });
});

describe("integrations", () => {
  let smtp: MailServer;
  beforeAll(async () => {
    smtp = await startMailServer({ user: "u1", pass: "p1-secret" });
  });
  afterAll(() => smtp.close());

  function integrationsHarness() {
    return harness({
      jobs: [job("backup", { notify: { on_failure: [entry("ops-chat:#data"), entry("email:ops@example.org")] } })],
      integrations: [
        integration("ops-chat", { provider: "chat", webhookUrl: `${rx.url}/chat` }),
        integration("broken", { provider: "pager", credentialStatus: "env var unset", unsetVars: ["PD_KEY"] }),
        integration("smtp", { provider: "smtp", host: "127.0.0.1", port: smtp.port, from: "svc@example.org", username: "u1", password: "p1-secret" }),
      ],
    });
  }

  it("syncs provider and credential status at start", async () => {
    const h = await integrationsHarness();
    open.push(h);
    expect(h.store.integrations.all().map((r) => [r.name, r.provider, r.credential_status]).sort()).toEqual([
      ["broken", "pager", "env var unset"],
      ["ops-chat", "chat", "configured"],
      ["smtp", "smtp", "configured"],
    ]);
  });

  it("test delivery: returns the remote status and body and records the result", async () => {
    const h = await integrationsHarness();
    open.push(h);
    rx.script.push({ status: 200, body: { received: true } });
    const r = await h.notifier.testIntegration("ops-chat");
    expect(r).toEqual({ ok: true, status: 200, response: { received: true }, error: null });
    expect(rx.received.at(-1)!.body).toStrictEqual({ channel: "#data", text: expect.stringContaining('test notification from integration "ops-chat"') });
    expect(h.store.integrations.get("ops-chat")).toMatchObject({ last_test_result: "ok (200)", last_test_at: expect.any(String) });

    rx.script.push({ status: 500, body: { err: "x" } });
    const bad = await h.notifier.testIntegration("ops-chat");
    expect(bad).toMatchObject({ ok: false, status: 500, response: { err: "x" } });
    expect(rx.received).toHaveLength(2); // one attempt, no retries
    expect(h.store.integrations.get("ops-chat")!.last_test_result).toMatch(/^failed: POST .*HTTP 500/);
  });

  it("test delivery: a JSON answer that echoes the webhook URL comes back with it as *** (a text answer did already)", async () => {
    const h = await integrationsHarness();
    open.push(h);
    rx.script.push({ status: 400, body: { error: "bad channel", echo: { url: `${rx.url}/chat`, list: [`posted to ${rx.url}/chat`] } } });
    const r = await h.notifier.testIntegration("ops-chat");
    expect(JSON.stringify(r)).not.toContain("/chat");
    expect(r.response).toEqual({ error: "bad channel", echo: { url: "***", list: ["posted to ***"] } });
  });

  it("test delivery over SMTP returns the SMTP reply", async () => {
    const h = await integrationsHarness();
    open.push(h);
    const r = await h.notifier.testIntegration("smtp");
    expect(r).toMatchObject({ ok: true, status: 250 });
    expect(String(r.response)).toMatch(/^250 /);
    expect(smtp.mails.at(-1)).toMatchObject({ to: ["ops@example.org"], auth: { username: "u1", password: "p1-secret" } });
  });

  it("test delivery with unset credentials fails without sending; unknown name is NotFound", async () => {
    const h = await integrationsHarness();
    open.push(h);
    const r = await h.notifier.testIntegration("broken");
    expect(r).toEqual({ ok: false, status: null, response: null, error: 'integration "broken" (pager): env var unset: PD_KEY; nothing is sent until it is set (and svcd reloaded)' });
    expect(h.store.integrations.get("broken")!.last_test_result).toContain("failed: ");
    await expect(h.notifier.testIntegration("nope")).rejects.toBeInstanceOf(NotFoundError);
  });
});
