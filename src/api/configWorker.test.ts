/**
 * The config worker (configWorker.ts): config texts redacted and validated
 * in a real worker thread, with the answers the same functions give in
 * process; one thread, started on the first request, requests in order; a
 * thread that cannot start, dies or sits idle is replaced by the next
 * request, and what it held fails with a 500 `internal` error, never
 * falling back to the event loop.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { placeholdersOverSecrets, redactedText, validateConfigText } from "./configAccess.js";
import { ConfigWorker, ConfigWorkerError, RedactedTexts, threadFailure } from "./configWorker.js";
import { until as poll } from "../../test/helpers/until.js";
import { ApiError } from "./errors.js";

const FIXTURES = resolve(import.meta.dirname, "../../test/fixtures/configWorker");
const DIES = pathToFileURL(join(FIXTURES, "dies.mjs")).href;
const QUOTES = pathToFileURL(join(FIXTURES, "quotes.ts")).href;

const SVC = `jobs:
  extract:
    command: echo hi
    env:
      # TOKEN: s3cret-commented
      DB_PASSWORD:
        s3cret-db
    description: plain
`;
const BROKEN = `jobs:\n  a: {command: "s3cret-unclosed\n`;
const DAEMON = `auth:\n  type: bearer\n  bearer: {token: s3cret-token}\nexecutor:\n  global_env: {API_KEY: s3cret-api}\n`;

const dir = mkdtempSync(join(tmpdir(), "svc-config-worker-"));
const workers: ConfigWorker[] = [];
function worker(opts?: ConstructorParameters<typeof ConfigWorker>[0]): ConfigWorker {
  const w = new ConfigWorker(opts);
  workers.push(w);
  return w;
}

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const until = (what: string, pred: () => boolean, ms = 10_000) => poll(what, pred, ms, 10);

describe("ConfigWorker with its own thread (src/api/configThread.ts)", () => {
  it("answers what the functions answer in process: redaction, YAML errors, validation, the placeholder guard", async () => {
    const w = worker();
    expect(w.running).toBe(false);
    const redacted = await w.redact("svc.yaml", SVC);
    expect(redacted).toEqual(redactedText("svc.yaml", SVC));
    expect(redacted.ok && redacted.text).not.toContain("s3cret");
    expect(await w.redact("svcd.yaml", DAEMON)).toEqual(redactedText("svcd.yaml", DAEMON));
    const broken = await w.redact("svc.yaml", BROKEN);
    expect(broken.ok).toBe(false);
    expect(broken).toEqual(redactedText("svc.yaml", BROKEN));

    const file = join(dir, "svc.yaml");
    writeFileSync(file, SVC);
    const bad = SVC.replace("command: echo hi", "command: echo hi\n    retries: many");
    expect(await w.validate("svc.yaml", bad, file)).toEqual(validateConfigText("svc.yaml", bad, file));
    expect((await w.validate("svc.yaml", bad, file)).valid).toBe(false);
    expect(await w.validate("svcd.yaml", DAEMON, join(dir, "svcd.yaml"))).toEqual(validateConfigText("svcd.yaml", DAEMON, join(dir, "svcd.yaml")));

    const copy = (redacted as { text: string }).text;
    const guard = await w.placeholders("svc.yaml", copy, SVC, file);
    expect(guard).toEqual(placeholdersOverSecrets("svc.yaml", copy, SVC, file));
    expect(guard.map((i) => i.path).sort()).toEqual(["/jobs/extract/env/DB_PASSWORD", "/jobs/extract/env/TOKEN"]);
    expect(w.starts).toBe(1);
  });

  it("one thread, started on the first request, takes concurrent requests in order", async () => {
    const w = worker();
    const texts = Array.from({ length: 5 }, (_, i) => SVC.replace("plain", `plain ${i}`));
    const answers = await Promise.all(texts.map((t) => w.redact("svc.yaml", t)));
    answers.forEach((a, i) => expect(a.ok && a.text).toContain(`plain ${i}`));
    expect(w.starts).toBe(1);
    expect(w.inFlight).toBe(0);
  });

  it("the validator sees the daemon's environment as it is now (${env:} references)", async () => {
    const w = worker();
    const text = 'auth:\n  type: bearer\n  bearer: {token: "${env:SVC_CONFIG_WORKER_TEST}"}\n';
    const file = join(dir, "svcd.yaml");
    delete process.env.SVC_CONFIG_WORKER_TEST;
    const unset = await w.validate("svcd.yaml", text, file);
    expect(unset.valid).toBe(false);
    expect(unset.errors[0]!.message).toContain("${env:SVC_CONFIG_WORKER_TEST} is not set");
    process.env.SVC_CONFIG_WORKER_TEST = "set after the thread started";
    try {
      expect(await w.validate("svcd.yaml", text, file)).toMatchObject({ valid: true, errors: [] });
    } finally {
      delete process.env.SVC_CONFIG_WORKER_TEST;
    }
    expect(w.starts).toBe(1);
  });

  it("stops after idleMs without a request; the next request starts a new thread", async () => {
    const w = worker({ idleMs: 50 });
    expect((await w.redact("svc.yaml", SVC)).ok).toBe(true);
    await until("the idle thread to stop", () => !w.running);
    expect((await w.redact("svc.yaml", SVC)).ok).toBe(true);
    expect(w.starts).toBe(2);
  });
});

describe("ConfigWorker when its thread fails", () => {
  it("cannot start: each request fails with a 500 ConfigWorkerError, and each tries a new thread", async () => {
    const w = worker({ entry: pathToFileURL(join(FIXTURES, "missing.mjs")).href });
    for (let i = 1; i <= 2; i++) {
      const e = await w.redact("svc.yaml", SVC).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ConfigWorkerError);
      expect((e as ConfigWorkerError).status).toBe(500);
      expect((e as ConfigWorkerError).code).toBe("internal");
      expect((e as Error).message).toMatch(/config worker stopped \(.*missing\.mjs/);
      expect(w.starts).toBe(i);
      expect(w.running).toBe(false);
    }
  });

  it("dies: the requests it held fail, the next request gets a new thread", async () => {
    const w = worker({ entry: DIES });
    expect(await w.redact("svc.yaml", "abc")).toEqual({ ok: true, text: "ABC" });
    const held = [w.redact("svc.yaml", "exit"), w.redact("svc.yaml", "queued behind it")].map((p) => p.catch((x: unknown) => x));
    for (const e of await Promise.all(held)) {
      expect(e).toBeInstanceOf(ConfigWorkerError);
      expect((e as Error).message).toContain("exit code 3");
    }
    expect(await w.redact("svc.yaml", "def")).toEqual({ ok: true, text: "DEF" });
    expect(w.starts).toBe(2);
  });

  it("answers nothing for stuckMs (a job that never ends): it is ended, what it held fails with a 500 that says so, the next request gets a new thread", async () => {
    const w = worker({ entry: DIES, stuckMs: 400 });
    expect(await w.redact("svc.yaml", "abc")).toEqual({ ok: true, text: "ABC" });
    const t0 = Date.now();
    const held = [w.redact("svc.yaml", "spin"), w.redact("svc.yaml", "queued behind it")].map((p) => p.catch((x: unknown) => x));
    for (const e of await Promise.all(held)) {
      expect(e).toBeInstanceOf(ConfigWorkerError);
      expect((e as ConfigWorkerError).status).toBe(500);
      expect((e as Error).message).toBe("the config worker answered nothing for 0.4 s (redact of a svc.yaml text (4 characters)); it was ended, and the next request starts a new one");
    }
    expect(Date.now() - t0).toBeGreaterThanOrEqual(380);
    expect(w.running).toBe(false);
    expect(await w.redact("svc.yaml", "def")).toEqual({ ok: true, text: "DEF" });
    expect(w.starts).toBe(2);
  });

  it("a slow queue is not stuck: each answer gives the next request stuckMs again", async () => {
    const w = worker({ entry: DIES, stuckMs: 1_500 });
    // Three jobs of ~0.6 s each: 1.8 s in all, more than stuckMs, but an answer every 0.6 s.
    const slow = await Promise.all([1, 2, 3].map(() => w.redact("svc.yaml", "busy 600")));
    expect(slow).toEqual([1, 2, 3].map(() => ({ ok: true, text: "BUSY 600" })));
    expect(w.starts).toBe(1);
  });

  it("throws outside a job: the same", async () => {
    const w = worker({ entry: DIES });
    const e = await w.redact("svc.yaml", "throw").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConfigWorkerError);
    expect((e as Error).message).toContain("the thread threw outside a job");
    expect(await w.redact("svc.yaml", "ghi")).toEqual({ ok: true, text: "GHI" });
    expect(w.starts).toBe(2);
  });

  it("a job that throws: that request fails with the error's class and frames, never its message (which can quote the text); the thread goes on", async () => {
    const w = worker({ entry: QUOTES });
    for (const ask of [() => w.redact("svc.yaml", SVC), () => w.validate("svcd.yaml", DAEMON, join(dir, "svcd.yaml"))]) {
      const e = await ask().catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ConfigWorkerError);
      expect((e as ConfigWorkerError).code).toBe("internal");
      const told = `${(e as Error).message}\n${(e as Error).stack}`;
      expect(told).toMatch(/the config worker failed on (redact of a svc\.yaml|validate of a svcd\.yaml) text \([\d,]+ characters\): QuotingError/);
      expect(told).toMatch(/\n\s+at .*quotes\.ts/);
      expect(told).not.toContain("s3cret");
      expect(told).not.toContain("unexpected value");
    }
    expect(w.starts).toBe(1);
    expect(w.running).toBe(true);
  });

  it("threadFailure: the name and the frames of what was thrown, not the message", () => {
    const e = new TypeError("Cannot read properties of undefined (reading 's3cret-token')");
    const reply = threadFailure(7, e);
    expect(reply).toMatchObject({ id: 7, ok: false, name: "TypeError" });
    expect(JSON.stringify(reply)).not.toContain("s3cret");
    expect((reply as { frames: string }).frames).toMatch(/^\s+at /);
    expect(threadFailure(8, "s3cret thrown as a string")).toEqual({ id: 8, ok: false, name: "string", frames: "" });
  });

  it("close(): what it held, and every later request, fail with 409 conflict (shutting down); the thread is ended", async () => {
    const w = worker({ entry: DIES });
    const held = w.redact("svc.yaml", "# hang").catch((x: unknown) => x);
    await until("the thread to hold the request", () => w.running && w.inFlight === 1);
    await w.close();
    expect(w.running).toBe(false);
    for (const e of [await held, await w.redact("svc.yaml", "abc").catch((x: unknown) => x)]) {
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).code).toBe("conflict");
      expect((e as Error).message).toContain("shutting down");
    }
    expect(w.starts).toBe(1);
  });
});

describe("RedactedTexts", () => {
  it("keeps the last answer per file by content; a failed one is not kept", async () => {
    const w = worker({ entry: DIES });
    const texts = new RedactedTexts(w);
    const first = texts.of("svc.yaml", "abc");
    expect(texts.of("svc.yaml", "abc")).toBe(first);
    expect(await first).toEqual({ ok: true, text: "ABC" });
    expect(await texts.of("svc.yaml", "abc")).toEqual({ ok: true, text: "ABC" });
    expect(w.starts).toBe(1);
    expect(await texts.of("svcd.yaml", "xyz")).toEqual({ ok: true, text: "XYZ" });

    await expect(texts.of("svc.yaml", "exit")).rejects.toBeInstanceOf(ConfigWorkerError);
    // Not kept: asked again, the text goes to a new thread (which fails again on this text).
    await expect(texts.of("svc.yaml", "exit")).rejects.toBeInstanceOf(ConfigWorkerError);
    expect(w.starts).toBe(2);
    expect(await texts.of("svc.yaml", "abc")).toEqual({ ok: true, text: "ABC" });
    expect(w.starts).toBe(3);
  });
});
