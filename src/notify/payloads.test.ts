/**
 * Notification payloads through the notifier, with real local peers: an
 * HTTP receiver for chat, forum, pager and webhook, a real SMTP server with
 * AUTH for email, and a real SQLite store in a temp directory. Payloads are
 * checked field by field against CONTRACT §6.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { entry, integration, job, startMailServer, startReceiver, type MailServer, type Receiver } from "./testkit.js";
import { harness, type Harness } from "./testkit.js";

describe("notification payloads (CONTRACT §6)", () => {
  let rx: Receiver;
  let smtp: MailServer;
  let h: Harness | null = null;

  beforeAll(async () => {
    rx = await startReceiver();
    smtp = await startMailServer({ user: "mailer-user", pass: "mailer-pass-123" });
  });
  afterAll(async () => {
    await rx.close();
    await smtp.close();
  });
  afterEach(async () => {
    await h?.close();
    h = null;
    rx.received.length = 0;
  });

  it("chat: {channel, text} with the default message", async () => {
    h = await harness({
      jobs: [job("backup", { notify: { on_failure: [entry("ops-chat:#data"), entry("ops-chat:@ana")] } })],
      integrations: [integration("ops-chat", { provider: "chat", webhookUrl: `${rx.url}/chat/T0/B0/SECRET` })],
    });
    const run = h.newRun("backup", { status: "FAILED", attempt: 2, exit_code: 3 });
    await h.emit("on_failure", run);
    expect(rx.received.map((r) => r.path)).toEqual(["/chat/T0/B0/SECRET", "/chat/T0/B0/SECRET"]);
    const text = `svc: job backup FAILED (run ${run.id}, attempt 2, exit 3)`;
    expect(rx.received[0]!.body).toStrictEqual({ channel: "#data", text });
    expect(rx.received[1]!.body).toStrictEqual({ channel: "@ana", text });
    const alerts = h.alerts();
    expect(alerts.map((a) => [a.status, a.attempts, a.error, a.event, a.channel])).toEqual([
      ["delivered", 1, null, "on_failure", "ops-chat:#data"],
      ["delivered", 1, null, "on_failure", "ops-chat:@ana"],
    ]);
    // The stored payload carries the content but no credential.
    expect(alerts[0]!.payload).not.toContain("SECRET");
  });

  it("forum: {channel, content} with a custom message and the last N log lines", async () => {
    h = await harness({
      jobs: [
        job("etl", {
          description: "nightly load",
          notify: {
            on_retry: [
              entry("forum:#ops", {
                message: "{{job.name}} ({{ job.description }}) retrying: attempt {{ run.attempt }}, {{ run.error }} [{{ event }}]",
                attachLogs: { lastLines: 2 },
              }),
            ],
          },
        }),
      ],
      integrations: [integration("forum", { provider: "forum", webhookUrl: `${rx.url}/forum` })],
    });
    const run = h.newRun("etl", { status: "RETRYING", attempt: 1, error: "timeout after 5s" });
    h.logLines(run.id, ["line 1", "line 2", "line 3"]);
    await h.emit("on_retry", run);
    expect(rx.received).toHaveLength(1);
    expect(rx.received[0]!.body).toStrictEqual({
      channel: "#ops",
      content: "etl (nightly load) retrying: attempt 1, timeout after 5s [on_retry]\n\nline 2\nline 3",
    });
  });

  it("attach_logs: all keeps the last lines within 1 MiB of text (10,000 lines of 64 KiB would not fit in one string)", async () => {
    h = await harness({
      jobs: [job("noisy", { notify: { on_failure: [entry(`webhook:${rx.url}/noisy`, { attachLogs: "all" })] } })],
      integrations: [],
    });
    const run = h.newRun("noisy", { status: "FAILED", attempt: 1, exit_code: 1 });
    const long = (i: number) => `${String(i).padStart(4, "0")}:${"x".repeat(60_000)}`;
    h.logLines(run.id, Array.from({ length: 40 }, (_, i) => long(i + 1)));
    await h.emit("on_failure", run);
    expect(rx.received).toHaveLength(1);
    const logs = (rx.received[0]!.body as { logs: { seq: number; line: string }[] }).logs;
    // 17 lines of 60,005 characters fit in 1 MiB; the 18th would not: the last 17 (seq 24-40), whole.
    expect(logs.map((l) => l.seq)).toEqual(Array.from({ length: 17 }, (_, i) => 24 + i));
    expect(logs.every((l, i) => l.line === long(24 + i))).toBe(true);
    expect(h.alerts().map((a) => a.status)).toEqual(["delivered"]);
  });

  it("pager: routing_key, trigger, dedup_key <job>:<run_id>, severity p1..p4, source svc", async () => {
    h = await harness({
      jobs: [
        job("db-dump", {
          notify: { on_failure: ["p1", "p2", "p3", "p4"].map((p) => entry(`oncall:${p}`)) },
        }),
      ],
      integrations: [integration("oncall", { provider: "pager", routingKey: "R0UTING-KEY-1", webhookUrl: `${rx.url}/enqueue` })],
    });
    const run = h.newRun("db-dump", { status: "FAILED", attempt: 1, exit_code: 2, error: "boom" });
    await h.emit("on_failure", run);
    expect(rx.received).toHaveLength(4);
    const severities = rx.received.map((r) => (r.body as { payload: { severity: string } }).payload.severity);
    expect(severities.sort()).toEqual(["critical", "error", "info", "warning"]);
    const body = rx.received.find((r) => (r.body as { payload: { severity: string } }).payload.severity === "critical")!.body;
    expect(body).toStrictEqual({
      routing_key: "R0UTING-KEY-1",
      event_action: "trigger",
      dedup_key: `db-dump:${run.id}`,
      payload: {
        summary: `svc: job db-dump FAILED (run ${run.id}, attempt 1, exit 2)`,
        severity: "critical",
        source: "svc",
        custom_details: {
          event: "on_failure",
          job: "db-dump",
          run_id: run.id,
          status: "FAILED",
          attempt: 1,
          exit_code: 2,
          trigger: "schedule",
          triggered_by: "scheduler",
          reason: null,
          cycle_id: run.cycle_id,
          started_at: run.started_at,
          finished_at: run.finished_at,
          duration: "1m 5s",
          error: "boom",
        },
      },
    });
    // The routing key is a credential: read from the integration at send time, never stored.
    for (const a of h.alerts()) expect(a.payload).not.toContain("R0UTING-KEY-1");
  });

  it("webhook: {event, job, run, message, logs} to a direct URL and through a webhook integration", async () => {
    h = await harness({
      jobs: [
        job("report", {
          tags: ["finance", "daily"],
          schedule: { frequency: "daily", time: { hour: 2, minute: 30 }, weekday: null, dayOfMonth: null, timezone: "UTC" },
          notify: {
            on_success: [entry(`webhook:${rx.url}/direct?token=abc`, { attachLogs: "all" }), entry("myhook:")],
          },
        }),
      ],
      integrations: [integration("myhook", { provider: "webhook", webhookUrl: `${rx.url}/via-integration` })],
    });
    const run = h.newRun("report", { status: "SUCCESS", attempt: 1, exit_code: 0, reason: "month end" });
    h.logLines(run.id, ["hello", "world"]);
    await h.emit("on_success", run);
    expect(rx.received.map((r) => r.path).sort()).toEqual(["/direct?token=abc", "/via-integration"]);
    const direct = rx.received.find((r) => r.path.startsWith("/direct"))!.body as Record<string, unknown>;
    expect(Object.keys(direct)).toEqual(["event", "job", "run", "message", "logs"]);
    expect(direct.event).toBe("on_success");
    expect(direct.job).toStrictEqual({ name: "report", description: null, tags: ["finance", "daily"], frequency: "daily" });
    expect(direct.run).toMatchObject({
      id: run.id,
      job_name: "report",
      status: "SUCCESS",
      attempt: 1,
      trigger: "schedule",
      reason: "month end",
      exit_code: 0,
      cycle_id: run.cycle_id,
      duration_ms: 65_000,
      sla_breached: 0,
      hc_status: null,
      error: null,
    });
    expect(direct.message).toBe(`svc: job report SUCCESS (run ${run.id}, attempt 1, exit 0)`);
    expect(direct.logs).toEqual([
      { seq: 1, ts: expect.any(String), stream: "stdout", line: "hello" },
      { seq: 2, ts: expect.any(String), stream: "stdout", line: "world" },
    ]);
    const via = rx.received.find((r) => r.path === "/via-integration")!.body as Record<string, unknown>;
    expect(Object.keys(via)).toEqual(["event", "job", "run", "message"]);
  });

  it("email: subject [svc] <job> <status>, body = message + log lines, AUTH with the integration's credentials", async () => {
    h = await harness({
      jobs: [
        job("backup", {
          notify: {
            on_failure: [
              entry("email:ops@example.org", {
                message: "Backup failed on {{ run.started_at }}: {{ run.error }}",
                attachLogs: { lastLines: 2 },
              }),
            ],
          },
        }),
      ],
      integrations: [
        integration("smtp", {
          provider: "smtp",
          host: "127.0.0.1",
          port: smtp.port,
          from: "svc@example.org",
          username: "mailer-user",
          password: "mailer-pass-123",
        }),
      ],
    });
    const run = h.newRun("backup", { status: "FAILED", error: "disk full" });
    h.logLines(run.id, ["start", "copying", "No space left on device"]);
    await h.emit("on_failure", run);
    expect(smtp.mails).toHaveLength(1);
    const m = smtp.mails[0]!;
    expect(m.auth).toEqual({ username: "mailer-user", password: "mailer-pass-123" });
    expect(m.from).toBe("svc@example.org");
    expect(m.to).toEqual(["ops@example.org"]);
    expect(m.raw).toMatch(/^Subject: \[svc\] backup FAILED\r?$/m);
    const body = m.raw.split(/\r?\n\r?\n/).slice(1).join("\n\n").replace(/\r\n/g, "\n");
    expect(body).toContain(`Backup failed on ${run.started_at}: disk full`);
    expect(body).toContain(`--- log of run ${run.id} (2 lines) ---\ncopying\nNo space left on device`);
    expect(body).not.toContain("start\n");
    const [alert] = h.alerts();
    expect(alert).toMatchObject({ status: "delivered", attempts: 1, error: null, channel: "email:ops@example.org" });
    expect(alert!.payload).not.toContain("mailer-pass-123");
  });
});
