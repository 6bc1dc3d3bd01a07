import type { IntegrationConfig, JobConfig, NotifyEntry, ProjectConfig } from "../config/types.js";
import type { EventBus } from "../engine/events.js";
import { iso, systemClock, type Clock } from "../shared/clock.js";
import type { Logger } from "../shared/logger.js";
import { toError } from "../shared/toError.js";
import type { Store } from "../store/api.js";
import { ConflictError, NotFoundError } from "../store/errors.js";
import type { AlertRow, LogLine } from "../store/types.js";
import { LOG_STREAMS } from "../store/types.js";
import { resolveChannel } from "../config/channels.js";
import { MAX_ATTEMPTS, realSleep, withRetries, type Sleep } from "./deliver.js";
import { buildDelivery, parseDelivery, sendDelivery, type AttemptResult, type Delivery } from "./providers/index.js";
import { integrationSecrets, scrub, scrubValue } from "./redact.js";
import { entriesFor, type NotifyPayload } from "./rules.js";
import { DEFAULT_MESSAGE, renderTemplate, templateVars } from "./template.js";
import { buildTestDelivery } from "./probeDelivery.js";
import { DeliveryInterrupted } from "./transport.js";

export interface NotifierDeps {
  bus: EventBus;
  store: Store;
  /** The current project (read at each event, so a reload takes effect at once). */
  getProject: () => ProjectConfig;
  log: Logger;
  clock?: Clock;
  /** Per outbound HTTP request or SMTP step. Default 10 000. */
  httpTimeoutMs?: number;
  /** Backoff wait between attempts; tests pass a fake. */
  sleep?: Sleep;
  /** How long stop() waits for in-flight deliveries. Default 15 000. */
  stopTimeoutMs?: number;
  /** Deliveries sending at once; the rest queue. Default 16. */
  maxConcurrent?: number;
}

export interface IntegrationTestResult {
  ok: boolean;
  /** Remote HTTP status or SMTP reply code; null when nothing answered. */
  status: number | null;
  /** Remote body (JSON when it is JSON) or SMTP reply text. */
  response: unknown;
  /** Why it failed (secret-free), null on success. */
  error: string | null;
}

export interface Notifier {
  /** Subscribes to `run:notify` and `config:reloaded`, syncs integration rows, resumes pending alerts. */
  start(): void;
  /** Stops taking events and waits (bounded) for deliveries in flight. Safe to call twice. */
  stop(): Promise<void>;
  /**
   * Re-dispatches a failed alert's stored payload (the job is not re-run).
   * Throws the store's NotFoundError (404) for an unknown id and ConflictError
   * (409) when it is pending or delivered. Returns the row, now pending.
   */
  retryAlert(id: number): AlertRow;
  /**
   * One real delivery (single attempt) of a test message through the named
   * integration; records the result as its last test. Throws NotFoundError
   * for an unknown name; delivery failures are returned, not thrown.
   */
  testIntegration(name: string): Promise<IntegrationTestResult>;
  /** Writes provider + credential status rows for the project's integrations. */
  syncIntegrations(project: ProjectConfig): void;
  /** Resolves once nothing is queued or in flight. */
  idle(): Promise<void>;
}

/** The provider label of an alert whose channel did not resolve. */
const UNKNOWN_PROVIDER = "unknown";

/** Attached lines are capped here, `attach_logs: all` included (CONTRACT: N 1-10000). */
export const MAX_ATTACHED_LINES = 10_000;
/**
 * ...and at most this much text: 10,000 lines of up to 64 KiB each would be 655 MB, past the longest string V8
 * can build, and the alert (its row included) was lost with a RangeError. Far more than a chat or pager takes.
 */
export const MAX_ATTACHED_BYTES = 1024 * 1024;

export function createNotifier(deps: NotifierDeps): Notifier {
  const { bus, store, getProject, log } = deps;
  const clock = deps.clock ?? systemClock;
  const timeoutMs = deps.httpTimeoutMs ?? 10_000;
  const sleep = deps.sleep ?? realSleep;
  const stopTimeoutMs = deps.stopTimeoutMs ?? 15_000;
  const maxConcurrent = Math.max(1, deps.maxConcurrent ?? 16);

  // Aborted at stop(): no new attempt starts, backoff waits end.
  const stopping = new AbortController();
  // Aborted when stop()'s bound runs out: requests still open are cut.
  const cutoff = new AbortController();
  const tasks = new Set<Promise<void>>();
  const delivering = new Set<number>(); // alert ids with a dispatch under way
  let unsubscribe: (() => void)[] = [];
  let started = false;
  let stopped: Promise<void> | null = null;

  // A small semaphore: a flood of events against a hung endpoint must not
  // open unbounded sockets.
  let active = 0;
  const waiting: (() => void)[] = [];
  async function acquire(): Promise<void> {
    if (active < maxConcurrent) {
      active++;
      return;
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  }
  function release(): void {
    const next = waiting.shift();
    if (next) next();
    else active--;
  }

  const now = () => iso(clock.now());
  const finished = (alertId: number, provider: string, status: "delivered" | "failed") => bus.emit("alert:finished", { alertId, provider, status });

  function track(p: Promise<void>): void {
    const t = p.catch((e: unknown) => log.error({ err: toError(e) }, "notification task failed"));
    tasks.add(t);
    void t.finally(() => tasks.delete(t));
  }

  function secrets(): string[] {
    try {
      return [...getProject().integrations.values()].flatMap(integrationSecrets);
    } catch {
      return [];
    }
  }

  function onNotify(ev: NotifyPayload): void {
    // Never work inside the emitter (the engine's tick): hop to the next turn.
    track(
      new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        handleEvent(ev);
      }),
    );
  }

  function handleEvent(ev: NotifyPayload): void {
    const project = getProject();
    const job = project.jobs.get(ev.run.job_name);
    if (!job) {
      log.warn({ job: ev.run.job_name, event: ev.event }, "notification for a job no longer in the config: skipped");
      return;
    }
    for (const entry of entriesFor(job.notify, ev)) {
      try {
        dispatchEntry(project, job, entry, ev);
      } catch (e) {
        log.error({ err: toError(e), job: job.name, event: ev.event, channel: scrub(entry.channel, []) }, "could not dispatch notification");
      }
    }
  }

  function dispatchEntry(project: ProjectConfig, job: JobConfig, entry: NotifyEntry, ev: NotifyPayload): void {
    const { run } = ev;
    const base = { job_name: job.name, run_id: run.id, event: ev.event, channel: entry.channel, created_at: now() };
    const resolved = resolveChannel(entry.channel, project.integrations);
    if ("error" in resolved) {
      const row = store.alerts.create({ ...base, payload: "null" });
      const error = scrub(resolved.error, secrets());
      store.alerts.recordAttempt(row.id, "failed", error, now());
      finished(row.id, UNKNOWN_PROVIDER, "failed");
      log.error({ alert: row.id, job: job.name, event: ev.event }, `notification not sent: ${error}`);
      return;
    }
    const message = renderTemplate(entry.message ?? DEFAULT_MESSAGE, templateVars(job, run, ev.event), (name) =>
      log.warn(
        { job: job.name, event: ev.event, variable: name },
        `unknown template variable {{ ${name} }} in a notify message of job ${job.name}: rendered empty`,
      ),
    );
    const delivery = buildDelivery({
      event: ev.event,
      job,
      run,
      message,
      logs: attachedLogs(entry.attachLogs, run.id),
      channel: resolved,
    });
    // The row exists before the first attempt: a crash leaves it pending, and
    // the next start() resumes it.
    const row = store.alerts.create({ ...base, payload: JSON.stringify(delivery) });
    if (!stopping.signal.aborted) track(deliver(row, delivery));
  }

  function attachedLogs(spec: NotifyEntry["attachLogs"], runId: number): LogLine[] | null {
    if (spec === null) return null;
    try {
      store.logs.flush(); // lines the run wrote just before the event
    } catch (e) {
      log.warn({ err: toError(e), run: runId }, "could not flush log lines before attaching them");
    }
    const n = spec === "all" ? MAX_ATTACHED_LINES : Math.min(Math.max(1, spec.lastLines), MAX_ATTACHED_LINES);
    // Newest first, and no further than the budget: a log of 10,000 lines of 64 KiB is ~650 MB.
    return store.logs.tailWithin(runId, n, MAX_ATTACHED_BYTES, [...LOG_STREAMS]);
  }

  async function deliver(row: AlertRow, delivery: Delivery | null): Promise<void> {
    if (delivering.has(row.id)) return;
    delivering.add(row.id);
    const fields = { alert: row.id, job: row.job_name, event: row.event, channel: scrub(row.channel, secrets()) };
    await acquire();
    try {
      if (stopping.signal.aborted) return; // stays pending; resumed at next start
      if (!delivery) {
        store.alerts.recordAttempt(row.id, "failed", "stored payload is not a delivery svc can send (the channel did not resolve when the alert was created)", now());
        finished(row.id, UNKNOWN_PROVIDER, "failed");
        return;
      }
      const result = await withRetries(() => sendDelivery(delivery, getProject().integrations, { timeoutMs, signal: cutoff.signal }), {
        sleep,
        stop: stopping.signal,
        onAttempt: (r, n, final) => recordAttempt(row.id, delivery.provider, r, n, final, fields),
      });
      if (result.ok) log.info(fields, "notification delivered");
    } catch (e) {
      if (e instanceof DeliveryInterrupted) {
        log.info(fields, "notification delivery interrupted by shutdown: left pending, resumed at next start");
      } else {
        log.error({ ...fields, err: toError(e) }, "notification delivery failed unexpectedly");
      }
    } finally {
      release();
      delivering.delete(row.id);
    }
  }

  function recordAttempt(id: number, provider: string, r: AttemptResult, n: number, final: boolean, fields: Record<string, unknown>): void {
    const error = r.error === null ? null : scrub(r.error, secrets());
    const status = r.ok ? "delivered" : final ? "failed" : "pending";
    store.alerts.recordAttempt(id, status, error, now());
    if (status !== "pending") finished(id, provider, status);
    if (!r.ok) {
      const next = final ? "giving up" : `retrying (attempt ${n + 1} of ${MAX_ATTEMPTS})`;
      log.warn({ ...fields, attempt: n, error }, `notification attempt ${n} failed: ${error}; ${next}`);
    }
  }

  function syncIntegrations(project: ProjectConfig): void {
    store.integrations.sync(
      [...project.integrations.values()].map((i) => ({
        name: i.name,
        provider: i.provider,
        credential_status: i.credentialStatus,
      })),
    );
    for (const i of project.integrations.values()) {
      if (i.credentialStatus !== "configured") warnCredentials(i);
    }
  }

  function warnCredentials(i: IntegrationConfig): void {
    const vars = i.unsetVars.length ? ` (unset: ${i.unsetVars.join(", ")})` : "";
    log.warn({ integration: i.name, provider: i.provider }, `integration ${i.name}: ${i.credentialStatus}${vars}`);
  }

  function resumePending(): void {
    const rows = store.alerts.pending();
    if (rows.length) log.info({ count: rows.length }, "resuming pending notifications");
    for (const row of rows) track(deliver(row, parseDelivery(row.payload)));
  }

  return {
    start() {
      if (started) return;
      started = true;
      unsubscribe = [
        bus.on("run:notify", onNotify),
        bus.on("config:reloaded", () => {
          try {
            syncIntegrations(getProject());
          } catch (e) {
            log.error({ err: toError(e) }, "could not sync integration status after reload");
          }
        }),
      ];
      syncIntegrations(getProject());
      resumePending();
    },

    stop() {
      if (stopped) return stopped;
      stopped = (async () => {
        for (const u of unsubscribe) u();
        stopping.abort();
        const timer = new Promise<void>((resolve) => setTimeout(resolve, stopTimeoutMs).unref());
        await Promise.race([drain(), timer]);
        cutoff.abort();
        await drain();
      })();
      return stopped;
    },

    retryAlert(id) {
      const row = store.alerts.get(id);
      if (!row) throw new NotFoundError("alert", id);
      if (row.status === "pending" || delivering.has(id)) {
        throw new ConflictError(`alert ${id} is pending: a delivery is already under way`);
      }
      // Throws ConflictError for a delivered alert (only failed ones are retried).
      const requeued = store.alerts.requeue(id);
      if (!stopping.signal.aborted) track(deliver(requeued, parseDelivery(requeued.payload)));
      return requeued;
    },

    async testIntegration(name) {
      const project = getProject();
      const integration = project.integrations.get(name);
      if (!integration) throw new NotFoundError("integration", name);
      const at = now();
      const delivery = buildTestDelivery(integration, project, at);
      let result: AttemptResult;
      try {
        result = await sendDelivery(delivery, project.integrations, { timeoutMs, signal: cutoff.signal });
      } catch (e) {
        result = { ok: false, status: null, response: null, error: toError(e).message, retryable: false };
      }
      const error = result.error === null ? null : scrub(result.error, integrationSecrets(integration));
      const summary = result.ok ? `ok${result.status !== null ? ` (${result.status})` : ""}` : `failed: ${error}`;
      // The status row exists from start()/reload; a config swapped without
      // the reload event would lack it.
      if (!store.integrations.get(name)) syncIntegrations(project);
      store.integrations.recordTest(name, summary, at);
      log.info({ integration: name, provider: integration.provider, ok: result.ok, status: result.status }, `integration test: ${summary}`);
      const response = scrubValue(result.response, integrationSecrets(integration));
      return { ok: result.ok, status: result.status, response, error };
    },

    syncIntegrations,

    idle: drain,
  };

  async function drain(): Promise<void> {
    while (tasks.size > 0) await Promise.allSettled([...tasks]);
  }
}
