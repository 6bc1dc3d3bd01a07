/**
 * Config, daemon control, database views, integrations, the dashboard and
 * the Unix socket, over real HTTP against the real engine, store, loader and
 * notifier (src/api/testkit.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { memoryLogger } from "../shared/logger.js";
import { Authenticator } from "./auth/index.js";
import { markUnixSocketRequest } from "./principal.js";
import { apiKit, type ApiKit, type Json } from "./testkit.js";

/** A local webhook receiver: records bodies, answers `status`. */
interface Receiver {
  url: string;
  bodies: unknown[];
  status: number;
  close(): Promise<void>;
}

async function receiver(): Promise<Receiver> {
  const rx: Receiver = { url: "", bodies: [], status: 200, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      rx.bodies.push(text ? JSON.parse(text) : null);
      res.writeHead(rx.status, { "content-type": "application/json" }).end(JSON.stringify({ got: true }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  rx.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  rx.close = () => new Promise((r) => server.close(() => r()));
  return rx;
}

const yaml = (hook: string, extra = "") => `
defaults:
  timezone: Europe/Berlin
integrations:
  hook:
    provider: webhook
    webhook_url: ${hook}
jobs:
  extract:
    command: |
      echo extracting
      echo '{"rows": 7}'
    frequency: daily
    time: "0230"
    output:
      rows: "json_field:rows"
    env:
      API_TOKEN: super-secret-value
  broken:
    command: echo "needle-in-the-haystack" >&2; exit 1
    notify:
      on_failure: "hook:"
  slow:
    command: sleep 30
${extra}`;

const DAEMON = `auth:
  type: bearer
  bearer:
    token: inline-secret-token
log:
  level: info
`;

let k: ApiKit;
let rx: Receiver;
beforeAll(async () => {
  rx = await receiver();
  // The bearer settings feed the redaction checks only: an authenticator left at auth.type none
  // keeps these routes open (auth is tested end to end in test/e2e/security-*.test.ts).
  k = await apiKit(yaml(rx.url), { daemon: DAEMON, auth: new Authenticator(memoryLogger()) });
});
afterAll(async () => {
  await k?.close();
  await rx?.close();
});

describe("daemon routes", () => {
  it("GET /api/daemon/info answers the daemon info record", async () => {
    const r = await k.get("/api/daemon/info");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      pid: process.pid,
      config_path: k.configPath,
      daemon_config_path: k.daemonPath,
      database_path: join(k.dir, ".svc", "svc.db"),
      total_jobs: 3,
      active_jobs: 3,
      paused_jobs: 0,
      version: "0.1.0-test",
    });
  });

  it("POST /api/daemon/reload applies a valid config, and answers 422 with every error for an invalid one or a cycle", async () => {
    k.writeConfig(yaml(rx.url, "  extra:\n    command: echo extra\n"));
    const ok = await k.post("/api/daemon/reload");
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ok: true, jobs: 4 });
    expect((await k.get("/api/jobs/extra")).status).toBe(200);

    k.writeConfig(yaml(rx.url, '  bad:\n    command: echo\n    frequency: daily\n    time: "2561"\n'));
    const bad = await k.post("/api/daemon/reload");
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe("invalid_config");
    expect(bad.body.error.message).toContain("previous config stays");
    expect(bad.body.error.details).toEqual([expect.objectContaining({ file: k.configPath, path: "/jobs/bad/time", line: expect.any(Number) })]);

    k.writeConfig(yaml(rx.url, "  a:\n    command: echo\n    depends_on: [b]\n  b:\n    command: echo\n    depends_on: [a]\n"));
    const cycle = await k.post("/api/daemon/reload");
    expect(cycle.status).toBe(422);
    expect(JSON.stringify(cycle.body.error.details)).toMatch(/a -> b -> a|b -> a -> b/);
    // the old config (with `extra`) stays
    expect((await k.get("/api/status")).body.jobs.total).toBe(4);
    k.writeConfig(yaml(rx.url));
    expect((await k.post("/api/daemon/reload")).body).toEqual({ ok: true, jobs: 3 });
  });

  it("POST /api/daemon/stop answers first, then asks the daemon to stop (graceful or forced)", async () => {
    const r = await k.post("/api/daemon/stop");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ stopping: true, force: false });
    await k.waitFor("stop call", () => k.stops.length === 1);
    expect((await k.post("/api/daemon/stop", { force: true })).body).toEqual({ stopping: true, force: true });
    expect((await k.request("POST", "/api/daemon/stop?force=true")).body.force).toBe(true);
    await k.waitFor("stop calls", () => k.stops.length === 3);
    expect(k.stops).toEqual([{ force: false }, { force: true }, { force: true }]);
    expect((await k.post("/api/daemon/stop", { force: "yes" })).status).toBe(400);
    expect(k.stops).toHaveLength(3);
  });
});

describe("config routes", () => {
  it("GET /api/config answers both effective configs with secrets redacted", async () => {
    const r = await k.get("/api/config");
    expect(r.status).toBe(200);
    expect(r.body.config.jobs.extract).toMatchObject({ frequency: "daily", env: { API_TOKEN: "***" } });
    expect(r.body.config.defaults.timezone).toBe("Europe/Berlin");
    expect(r.body.daemon).toBeTypeOf("object");
    expect(r.text).not.toContain("super-secret-value");
    expect(r.text).not.toContain("inline-secret-token");
  });

  it("GET /api/config answers the same text until a reload, then the new configs (svc.yaml and svcd.yaml)", async () => {
    const first = await k.get("/api/config");
    expect(first.headers.get("content-type")).toMatch(/^application\/json/);
    expect((await k.get("/api/config")).text).toBe(first.text);
    expect(first.body.config.jobs.later).toBeUndefined();
    k.writeConfig(yaml(rx.url, "  later:\n    command: echo later\n"));
    writeFileSync(k.daemonPath!, DAEMON.replace("level: info", "level: warn"));
    expect((await k.post("/api/daemon/reload")).body).toEqual({ ok: true, jobs: 4 });
    const after = await k.get("/api/config");
    expect(after.body.config.jobs.later).toMatchObject({ command: "echo later" });
    expect(after.body.daemon.log.level).toBe("warn");
    expect(after.text).not.toContain("inline-secret-token");
    // A reload that fails keeps the configs, and the answer with them.
    k.writeConfig("jobs: [");
    expect((await k.post("/api/daemon/reload")).status).toBe(422);
    expect((await k.get("/api/config")).text).toBe(after.text);
    k.writeConfig(yaml(rx.url));
    writeFileSync(k.daemonPath!, DAEMON);
    expect((await k.post("/api/daemon/reload")).body).toEqual({ ok: true, jobs: 3 });
    expect((await k.get("/api/config")).body.config.jobs.later).toBeUndefined();
  });

  it("GET /api/config/daemon answers the raw text with secrets ***, line for line", async () => {
    const r = await k.get("/api/config/daemon");
    expect(r.status).toBe(200);
    expect(r.body.path).toBe(k.daemonPath);
    expect(r.body.content.split("\n")).toHaveLength(DAEMON.split("\n").length);
    expect(r.body.content).toContain("type: bearer");
    expect(r.body.content).toContain("***");
    expect(r.body.content).not.toContain("inline-secret-token");
  });

  it("GET /api/config/source answers svc.yaml line for line with secrets ***, and as written with ?raw=1", async () => {
    const onDisk = readFileSync(k.configPath, "utf8");
    const r = await k.get("/api/config/source");
    expect(r.body.path).toBe(k.configPath);
    expect(r.body.content.split("\n")).toHaveLength(onDisk.split("\n").length);
    expect(r.body.content).toContain('API_TOKEN: "***"');
    expect(r.body.content).toContain('webhook_url: "***"');
    expect(r.text).not.toContain("super-secret-value");
    // auth.type none: every caller is admin, so may read the text as it is on disk.
    expect((await k.get("/api/config/source?raw=1")).body).toEqual({ path: k.configPath, content: onDisk });
  });

  it("POST /api/config/validate reports errors with positions and warnings, saving nothing", async () => {
    const before = readFileSync(k.configPath, "utf8");
    const ok = await k.post("/api/config/validate", { content: "jobs:\n  a:\n    command: echo hi\n" });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ valid: true, errors: [] });
    const bad = await k.post("/api/config/validate", { file: "svc.yaml", content: 'jobs:\n  a:\n    command: echo\n    frequency: daily\n    time: "9999"\n' });
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.errors[0]).toMatchObject({ line: 5, path: "/jobs/a/time", file: k.configPath });
    const daemonBad = await k.post("/api/config/validate", { file: "svcd.yaml", content: "nope: 1\n" });
    expect(daemonBad.body.valid).toBe(false);
    expect(daemonBad.body.errors[0].file).toBe(k.daemonPath);
    expect((await k.post("/api/config/validate", { file: "other.yaml", content: "" })).status).toBe(400);
    expect((await k.post("/api/config/validate", {})).status).toBe(400);
    expect(readFileSync(k.configPath, "utf8")).toBe(before);
  });

  it("POST /api/config/save: invalid or cyclic text is 422 and leaves the file untouched", async () => {
    const before = readFileSync(k.configPath, "utf8");
    const bad = await k.post("/api/config/save", { content: "jobs:\n  a:\n    frequency: sometimes\n" });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatchObject({ code: "invalid_config" });
    expect(bad.body.error.details.length).toBeGreaterThan(0);
    const cyc = await k.post("/api/config/save", { content: "jobs:\n  a:\n    command: x\n    depends_on: [a]\n" });
    expect(cyc.status).toBe(422);
    expect(readFileSync(k.configPath, "utf8")).toBe(before);
    expect(existsSync(`${k.configPath}.bak`)).toBe(false);
  });

  it("POST /api/config/save writes atomically, keeps <file>.bak and reloads", async () => {
    const before = readFileSync(k.configPath, "utf8");
    const mode = statSync(k.configPath).mode & 0o777;
    const next = yaml(rx.url, "  saved-job:\n    command: echo saved\n");
    const r = await k.post("/api/config/save", { file: "svc.yaml", content: next });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ saved: true, path: k.configPath, backup: `${k.configPath}.bak`, reloaded: true, jobs: 4 });
    expect(readFileSync(k.configPath, "utf8")).toBe(next);
    expect(readFileSync(`${k.configPath}.bak`, "utf8")).toBe(before);
    expect(statSync(k.configPath).mode & 0o777).toBe(mode);
    expect((await k.get("/api/jobs/saved-job")).status).toBe(200);
    // no temp files left behind
    expect(readdirSync(k.dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("POST /api/config/save answers 422 with the reload's errors when the other file breaks the reload", async () => {
    const goodDaemon = readFileSync(k.daemonPath!, "utf8");
    writeFileSync(k.daemonPath!, "bogus_section: 1\n");
    const next = yaml(rx.url);
    const r = await k.post("/api/config/save", { content: next });
    expect(r.status).toBe(422);
    expect(r.body.error.message).toContain("was saved");
    expect(r.body.error.details[0].file).toBe(k.daemonPath);
    writeFileSync(k.daemonPath!, goodDaemon);
    expect((await k.post("/api/daemon/reload")).body).toEqual({ ok: true, jobs: 3 });
  });

  it("POST /api/config/save of svcd.yaml validates it and reloads", async () => {
    const r = await k.post("/api/config/save", { file: "svcd.yaml", content: DAEMON.replace("level: info", "level: debug") });
    expect(r.status).toBe(200);
    expect(r.body.path).toBe(k.daemonPath);
    expect(readFileSync(`${k.daemonPath}.bak`, "utf8")).toBe(DAEMON);
    expect((await k.post("/api/config/save", { file: "svcd.yaml", content: "api: {addr: 7}\n" })).status).toBe(422);
  });
});

describe("database views", () => {
  let failedRun: number;

  beforeAll(async () => {
    await k.waitRun(await k.run("extract"), ["SUCCESS"]);
    failedRun = await k.run("broken");
    await k.waitRun(failedRun, ["FAILED"]);
    await k.notifier.idle();
  });

  it("GET /api/db/job_runs filters, sorts and pages", async () => {
    const r = await k.get("/api/db/job_runs");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ page: 1, page_size: 50 });
    const ids = r.body.rows.map((x: { id: number }) => x.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const failed = await k.get("/api/db/job_runs?status=Failed&job=broken&trigger=manual&page_size=25");
    expect(failed.body.rows.map((x: { id: number }) => x.id)).toContain(failedRun);
    expect(failed.body.page_size).toBe(25);
    const cycle = k.store.runs.get(failedRun)!.cycle_id;
    expect((await k.get(`/api/db/job_runs?cycle_id=${cycle}`)).body.rows.map((x: { id: number }) => x.id)).toEqual([failedRun]);
    const asc = await k.get("/api/db/job_runs?sort=id&order=ASC");
    expect(asc.body.rows[0].id).toBeLessThan(asc.body.rows.at(-1).id);
    // A column without an order: the table's default order, desc (docs/API.md).
    for (const sort of ["id", "duration_ms"]) {
      const rows = (await k.get(`/api/db/job_runs?sort=${sort}`)).body.rows as Record<string, number | null>[];
      const keys = rows.map((x) => x[sort] ?? -1);
      expect(keys, sort).toEqual([...keys].sort((a, b) => b - a));
    }
    expect((await k.get("/api/db/job_runs?sla_breached=0")).body.total).toBe(r.body.total);
    expect((await k.get("/api/db/job_runs?page=999")).body).toMatchObject({ rows: [], total: r.body.total, page: 999 });
    for (const bad of ["page_size=7", "page=0", "sort=nope", "order=up", "sla_breached=2", "status=bogus", "until=never"]) {
      const b = await k.get(`/api/db/job_runs?${bad}`);
      expect(b.status, bad).toBe(400);
      expect(b.body.error.code).toBe("bad_request");
    }
    expect((await k.get("/api/db/job_runs?sort=nope")).body.error.message).toContain("sortable columns");
  });

  it("GET /api/db/job_state pages the table", async () => {
    const r = await k.get("/api/db/job_state?page_size=100");
    expect(r.status).toBe(200);
    expect(r.body.rows.map((x: { job_name: string }) => x.job_name)).toEqual(expect.arrayContaining(["extract", "broken"]));
    expect((await k.get("/api/db/job_state?sort=last_failure&order=desc")).status).toBe(200);
  });

  it("POST /api/db/job_state/:job/clear_lock: 404 unknown, 409 while running, 200 otherwise", async () => {
    expect((await k.post("/api/db/job_state/nope/clear_lock")).status).toBe(404);
    expect((await k.post("/api/db/job_state/..%2Fx/clear_lock")).status).toBe(400);
    const id = await k.run("slow");
    await k.waitRun(id, ["RUNNING"]);
    const busy = await k.post("/api/db/job_state/slow/clear_lock");
    expect(busy.status).toBe(409);
    expect(busy.body.error.message).toContain(String(id));
    await k.post("/api/jobs/slow/cancel");
    await k.waitRun(id, ["FAILED"]);
    const ok = await k.post("/api/db/job_state/slow/clear_lock");
    expect(ok.status).toBe(200);
    expect(ok.body.row).toMatchObject({ job_name: "slow", lock_pid: null });
  });

  it("GET /api/db/run_logs searches lines (full text, stream, run, job)", async () => {
    const deadline = Date.now() + 5_000;
    let rows: { run_id: number; line: string; stream: string }[] = [];
    while (Date.now() < deadline) {
      rows = (await k.get("/api/db/run_logs?q=haystack")).body.rows;
      if (rows.length > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(rows.length).toBeGreaterThan(0);
    expect(rows[0]).toMatchObject({ stream: "stderr", line: "needle-in-the-haystack" });
    const byRun = await k.get(`/api/db/run_logs?run_id=${failedRun}&stream=STDERR&limit=10`);
    expect(byRun.body).toMatchObject({ limit: 10, offset: 0, total: 1 });
    expect((await k.get("/api/db/run_logs?job=extract")).body.rows.every((x: { job_name: string }) => x.job_name === "extract")).toBe(true);
    for (const bad of ["limit=0", "limit=1001", "offset=-1", "stream=stdin", "run_id=x"]) expect((await k.get(`/api/db/run_logs?${bad}`)).status, bad).toBe(400);
  });

  it("GET /api/db/run_outputs filters by run, job, cycle and variable", async () => {
    const r = await k.get("/api/db/run_outputs?job=extract&var_name=rows");
    expect(r.status).toBe(200);
    expect(r.body.rows[0]).toMatchObject({ job_name: "extract", var_name: "rows", value: "7" });
    const cycle = r.body.rows[0].cycle_id;
    expect((await k.get(`/api/db/run_outputs?cycle_id=${cycle}`)).body.total).toBe(1);
    expect((await k.get("/api/db/run_outputs?cycle_id=not%20a%20uuid")).status).toBe(400);
  });

  it("GET /api/db/alerts and POST /api/db/alerts/:id/retry (404 unknown, 409 pending)", async () => {
    const r = await k.get("/api/db/alerts?job=broken");
    expect(r.status).toBe(200);
    expect(r.body.rows[0]).toMatchObject({ job_name: "broken", status: "delivered", event: "on_failure" });
    expect(rx.bodies.some((b) => (b as { event?: string }).event === "on_failure")).toBe(true);
    expect((await k.get("/api/db/alerts?status=bogus")).status).toBe(400);
    expect((await k.get("/api/db/alerts?status=DELIVERED")).status).toBe(200);

    // a failed alert can be retried once; a second retry while it is pending is 409
    rx.status = 500;
    const again = await k.run("broken");
    await k.waitRun(again, ["FAILED"]);
    const failedAlert = await k.waitFor("a failed alert", () => k.store.alerts.search({ status: "failed" }, 1, 0).rows[0]);
    rx.status = 200;
    const retry = await k.post(`/api/db/alerts/${failedAlert.id}/retry`);
    expect(retry.status).toBe(200);
    expect(retry.body.alert).toMatchObject({ id: failedAlert.id, status: "pending" });
    const twice = await k.post(`/api/db/alerts/${failedAlert.id}/retry`);
    expect(twice.status).toBe(409);
    await k.notifier.idle();
    expect(k.store.alerts.get(failedAlert.id)!.status).toBe("delivered");
    expect((await k.post("/api/db/alerts/999999/retry")).status).toBe(404);
    expect((await k.post("/api/db/alerts/abc/retry")).status).toBe(400);
  });

  it("GET /api/db/state joins job_state with paused, running run ids and the local next run", async () => {
    const id = await k.run("slow");
    await k.waitRun(id, ["RUNNING"]);
    await k.post("/api/jobs/broken/pause");
    const r = await k.get("/api/db/state?page_size=100");
    expect(r.status).toBe(200);
    const row = (name: string) => r.body.rows.find((x: { job_name: string }) => x.job_name === name);
    expect(row("slow")).toMatchObject({ running_run_ids: [id], paused: false, in_config: true });
    expect(row("broken")).toMatchObject({ paused: true, running_run_ids: [] });
    expect(row("extract").next_run).toMatch(/Z$/);
    expect(row("extract").next_run_local).toMatch(/T02:30:00\+0[12]:00 (CET|CEST|GMT\+[12])$/);
    expect(r.body.rows.map((x: { job_name: string }) => x.job_name)).toEqual([...r.body.rows.map((x: { job_name: string }) => x.job_name)].sort());
    expect((await k.get("/api/db/state?sort=nope")).status).toBe(400);
    const desc = await k.get("/api/db/state?sort=job_name&order=desc");
    expect(desc.body.rows[0].job_name).toBe("slow");
    await k.post("/api/jobs/slow/cancel");
    await k.post("/api/jobs/broken/resume");
    await k.waitRun(id, ["FAILED"]);
  });
});

describe("integrations", () => {
  it("GET /api/integrations lists credential status and the last test", async () => {
    const r = await k.get("/api/integrations");
    expect(r.body).toEqual({
      integrations: [{ name: "hook", provider: "webhook", credential_status: "configured", last_test_result: null, last_test_at: null }],
    });
  });

  it("POST /api/integrations/:name/test sends one delivery and records it; 404 unknown", async () => {
    const before = rx.bodies.length;
    const r = await k.post("/api/integrations/hook/test");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, status: 200, response: { got: true } });
    expect(rx.bodies.length).toBe(before + 1);
    const listed = (await k.get("/api/integrations")).body.integrations[0];
    expect(listed.last_test_result).toMatch(/^ok/);
    expect(listed.last_test_at).not.toBeNull();
    expect((await k.post("/api/integrations/nope/test")).status).toBe(404);
  });
});

describe("the Unix socket", () => {
  it("carries the same API; manual runs are triggered_by cli", async () => {
    const sockDir = mkdtempSync(join(tmpdir(), "svc-sock-"));
    const sock = join(sockDir, "svcd.sock");
    // Exactly what the daemon does (src/daemon/daemon.ts).
    const unix = createServer((req, res) => {
      markUnixSocketRequest(req);
      k.app.routing(req, res);
    });
    unix.on("upgrade", (req, socket, head) => {
      markUnixSocketRequest(req);
      k.app.server.emit("upgrade", req, socket, head);
    });
    await new Promise<void>((r) => unix.listen(sock, r));
    try {
      const call = (method: string, path: string) =>
        new Promise<{ status: number; body: Json }>((resolve, reject) => {
          const req = httpRequest({ socketPath: sock, method, path, headers: { host: "svc" } }, (res: IncomingMessage) => {
            let text = "";
            res.on("data", (c) => (text += c));
            res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
          });
          req.on("error", reject);
          req.end();
        });
      const tcp = await k.get("/api/jobs");
      const viaSocket = await call("GET", "/api/jobs");
      expect(viaSocket.status).toBe(200);
      expect(viaSocket.body.jobs.map((j: { name: string }) => j.name)).toEqual(tcp.body.jobs.map((j: { name: string }) => j.name));
      expect((await call("GET", "/api/nope")).status).toBe(404);
      const started = await call("POST", "/api/jobs/extract/run");
      expect(started.status).toBe(202);
      expect((await k.waitRun(started.body.run_id, ["SUCCESS"])).triggered_by).toBe("cli");

      // the WebSocket log stream over the socket
      const ws = new WebSocket(`ws+unix://${sock}:/ws/logs/${started.body.run_id}`);
      const frames: { type: string }[] = [];
      ws.on("message", (d) => frames.push(JSON.parse(String(d))));
      const code = await new Promise<number>((r) => ws.on("close", (c) => r(c)));
      expect(code).toBe(1000);
      expect(frames.at(-1)).toEqual({ type: "end", status: "SUCCESS" });
      expect(frames.filter((f) => f.type === "line").length).toBe(3);
    } finally {
      unix.closeAllConnections();
      await new Promise((r) => unix.close(r));
      rmSync(sockDir, { recursive: true, force: true });
    }
  });
});

describe("the dashboard", () => {
  it("GET / without a build answers a page saying so", async () => {
    const r = await k.get("/");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect(r.text).toContain("dashboard is not built");
    expect(r.text).toContain('href="api/status"');
    expect((await k.get("/assets/app.js")).status).toBe(404);
  });

  it("serves dist/web/index.html at / and the hashed assets, nothing outside them", async () => {
    const web = mkdtempSync(join(tmpdir(), "svc-web-"));
    mkdirSync(join(web, "assets"));
    writeFileSync(join(web, "index.html"), '<!doctype html><script src="./assets/app-1234.js"></script>');
    writeFileSync(join(web, "assets", "app-1234.js"), "console.log('svc')");
    writeFileSync(join(web, "secret.txt"), "not served");
    const w = await apiKit("jobs:\n  a:\n    command: echo\n", { webRoot: web });
    try {
      const index = await w.get("/");
      expect(index.status).toBe(200);
      expect(index.text).toContain("assets/app-1234.js");
      expect(index.headers.get("cache-control")).toBe("no-cache");
      const asset = await w.get("/assets/app-1234.js");
      expect(asset.status).toBe(200);
      expect(asset.headers.get("content-type")).toMatch(/javascript/);
      expect(asset.headers.get("cache-control")).toContain("immutable");
      for (const escape of ["/assets/..%2Fsecret.txt", "/assets/%2e%2e/secret.txt", "/assets/..%2F..%2Fsvc.yaml"]) {
        const r = await w.get(escape);
        expect(r.status, escape).toBe(404);
        expect(r.body.error.code, escape).toBe("not_found");
        expect(r.text).not.toContain("not served");
      }
      expect((await w.get("/assets/nope.js")).status).toBe(404);
      expect((await w.get("/secret.txt")).status).toBe(404);
    } finally {
      await w.close();
      rmSync(web, { recursive: true, force: true });
    }
  });
});
