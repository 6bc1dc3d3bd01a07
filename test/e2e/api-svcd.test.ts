/**
 * The HTTP API through the built `svcd` binary: the same answers over TCP
 * and over the Unix socket, error cases, config save, the WebSocket log
 * stream on both transports, and the dashboard. Lifecycle and reload via
 * SIGHUP are in daemon-lifecycle.test.ts.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { cleanup, project, startDaemon, until, type DaemonProc } from "../helpers/daemonKit.js";

const YAML = `defaults:
  timezone: UTC
jobs:
  extract:
    command: |
      echo extracting
      echo '{"rows": 7}'
    frequency: daily
    time: "0230"
    tags: [etl]
    output:
      rows: "json_field:rows"
    env:
      TOKEN: e2e-secret-value
  transform:
    command: echo "got {{ outputs.extract.rows }}"
    frequency: after:extract
    tags: [etl]
  ticker:
    command: |
      i=0
      while [ $i -lt 30 ]; do echo "tick $i"; i=$((i+1)); sleep 0.03; done
    concurrency: allow
  slow:
    command: sleep 30
`;

let d: DaemonProc;
let dir: string;

beforeAll(async () => {
  dir = project(YAML);
  d = await startDaemon(dir);
}, 30_000);

afterAll(async () => {
  await d?.stop("SIGKILL");
  if (dir) cleanup(dir);
});

type Run = { run_id: number; cycle_id: string; status: string };

async function finished(id: number): Promise<{ status: string }> {
  return until(`run ${id} to finish`, async () => {
    const r = await d.api<{ status: string }>("GET", `/api/runs/${id}`);
    return ["SUCCESS", "FAILED", "SKIPPED"].includes(r.body.status) ? r.body : null;
  });
}

/** Fields that differ between two calls a moment apart. */
function stable(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body), (k, v) => (k === "uptime_s" ? "<uptime>" : v));
}

describe("TCP and the Unix socket", () => {
  it("the socket is 0600 and every read route answers the same on both", async () => {
    expect(statSync(join(d.dataDir, "svcd.sock")).mode & 0o777).toBe(0o600);
    const run = await d.api<Run>("POST", "/api/jobs/extract/run");
    expect(run.status).toBe(202);
    await finished(run.body.run_id);
    const id = run.body.run_id;
    const cycle = run.body.cycle_id;
    // The downstream run of the same cycle must be over too, or the two answers could straddle its change.
    await until("transform to finish in the cycle", async () => {
      const rows = (await d.api<{ rows: { job_name: string; status: string }[] }>("GET", `/api/db/job_runs?cycle_id=${cycle}`)).body.rows;
      return rows.some((r) => r.job_name === "transform" && ["SUCCESS", "FAILED", "SKIPPED"].includes(r.status));
    });
    const routes = [
      "/api/status",
      "/api/jobs",
      "/api/jobs?tag=etl",
      "/api/jobs/extract?runs=5",
      `/api/runs/${id}`,
      `/api/runs/${id}/logs`,
      `/api/runs/${id}/outputs`,
      "/api/audit?status=success",
      "/api/tags",
      "/api/dag",
      "/api/daemon/info",
      "/api/config",
      "/api/config/daemon",
      "/api/config/source",
      `/api/db/job_runs?cycle_id=${cycle}`,
      "/api/db/job_state",
      `/api/db/run_logs?run_id=${id}`,
      `/api/db/run_outputs?run_id=${id}`,
      "/api/db/alerts",
      "/api/db/state",
      "/api/integrations",
      "/api/openapi.json",
      "/api/nope",
      "/api/jobs/nope",
      "/api/db/job_runs?page_size=7",
    ];
    for (const path of routes) {
      const tcp = await d.api("GET", path);
      const sock = await d.sock("GET", path);
      expect(sock.status, path).toBe(tcp.status);
      expect(stable(sock.body), path).toEqual(stable(tcp.body));
    }
  });

  it("manual runs are triggered_by api over TCP and cli over the socket", async () => {
    const viaTcp = await d.api<Run>("POST", "/api/jobs/ticker/run", { reason: "tcp" });
    const viaSock = await d.sock<Run>("POST", "/api/jobs/ticker/run", { reason: "socket" });
    expect(viaTcp.status).toBe(202);
    expect(viaSock.status).toBe(202);
    await finished(viaTcp.body.run_id);
    await finished(viaSock.body.run_id);
    expect((await d.api<{ triggered_by: string }>("GET", `/api/runs/${viaTcp.body.run_id}`)).body.triggered_by).toBe("api");
    expect((await d.api<{ triggered_by: string }>("GET", `/api/runs/${viaSock.body.run_id}`)).body.triggered_by).toBe("cli");
  });

  it("secrets never appear in any config or job view", async () => {
    for (const path of ["/api/config", "/api/jobs", "/api/jobs/extract"]) {
      const r = await d.api("GET", path);
      expect(JSON.stringify(r.body), path).not.toContain("e2e-secret-value");
    }
  });
});

describe("errors through the binary", () => {
  it("answers the catalogue's codes", async () => {
    const cases: [string, string, unknown, number, string][] = [
      ["GET", "/api/jobs/nope", undefined, 404, "not_found"],
      ["GET", "/api/jobs/..%2F..%2Fetc", undefined, 400, "bad_request"],
      ["GET", "/api/audit?trigger=cron", undefined, 400, "bad_request"],
      ["POST", "/api/jobs/extract/run", { reason: "x".repeat(501) }, 400, "bad_request"],
      ["POST", "/api/jobs/slow/cancel", undefined, 409, "conflict"],
      ["POST", "/api/jobs/extract/retry", undefined, 409, "conflict"],
      ["POST", "/api/db/alerts/12345/retry", undefined, 404, "not_found"],
      ["POST", "/api/integrations/nope/test", undefined, 404, "not_found"],
      ["POST", "/api/config/save", { content: "jobs: [" }, 422, "invalid_config"],
      ["POST", "/api/jobs/extract/run", { reason: "y".repeat(1024 * 1024) }, 413, "payload_too_large"],
    ];
    for (const [method, path, body, status, code] of cases) {
      const r = await d.api<{ error: { code: string; message: string } }>(method, path, body);
      expect(r.status, `${method} ${path}`).toBe(status);
      expect(r.body.error.code, `${method} ${path}`).toBe(code);
      expect(r.body.error.message).not.toMatch(/\n\s+at /);
    }
    expect((await d.api("GET", "/api/status")).status).toBe(200);
  });

  it("clear_lock is 409 while the job runs", async () => {
    const run = await d.api<Run>("POST", "/api/jobs/slow/run");
    await until("slow to run", async () => (await d.api<{ status: string }>("GET", `/api/runs/${run.body.run_id}`)).body.status === "RUNNING");
    expect((await d.api("POST", "/api/db/job_state/slow/clear_lock")).status).toBe(409);
    expect((await d.api("POST", "/api/jobs/slow/cancel")).status).toBe(200);
    await finished(run.body.run_id);
    expect((await d.api("POST", "/api/db/job_state/slow/clear_lock")).status).toBe(200);
  });
});

describe("config save through the binary", () => {
  it("writes svc.yaml atomically with a .bak and the daemon reloads it", async () => {
    const file = join(dir, "svc.yaml");
    const before = readFileSync(file, "utf8");
    const next = `${before}  added:\n    command: echo added\n`;
    const r = await d.api<{ saved: boolean; jobs: number; backup: string }>("POST", "/api/config/save", { content: next });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ saved: true, jobs: 5, backup: `${file}.bak` });
    expect(readFileSync(`${file}.bak`, "utf8")).toBe(before);
    expect(readFileSync(file, "utf8")).toBe(next);
    expect((await d.api("GET", "/api/jobs/added")).status).toBe(200);
    const cyc = await d.api<{ error: { details: unknown[] } }>("POST", "/api/config/save", { content: "jobs:\n  a:\n    command: x\n    depends_on: [b]\n  b:\n    command: x\n    depends_on: [a]\n" });
    expect(cyc.status).toBe(422);
    expect(JSON.stringify(cyc.body.error.details)).toMatch(/a -> b -> a|b -> a -> b/);
    expect(readFileSync(file, "utf8")).toBe(next);
  });
});

describe("the WebSocket log stream through the binary", () => {
  async function follow(url: string): Promise<{ code: number; frames: { type: string; seq?: number; line?: string; status?: string }[] }> {
    const ws = new WebSocket(url);
    const frames: { type: string; seq?: number }[] = [];
    ws.on("message", (m) => frames.push(JSON.parse(String(m))));
    const code = await new Promise<number>((resolve, reject) => {
      ws.on("close", (c) => resolve(c));
      ws.on("error", reject);
    });
    return { code, frames };
  }

  it("streams a running job to a TCP client and a socket client alike, every line once", async () => {
    const run = await d.api<Run>("POST", "/api/jobs/ticker/run");
    const id = run.body.run_id;
    const [tcp, sock] = await Promise.all([
      follow(`ws://${d.addr}/ws/logs/${id}`),
      follow(`ws+unix://${join(d.dataDir, "svcd.sock")}:/ws/logs/${id}`),
    ]);
    for (const s of [tcp, sock]) {
      expect(s.code).toBe(1000);
      const seqs = s.frames.filter((f) => f.type === "line").map((f) => f.seq);
      expect(seqs).toEqual(Array.from({ length: 31 }, (_, i) => i + 1));
      expect(s.frames.at(-1)).toEqual({ type: "end", status: "SUCCESS" });
    }
    const unknown = await follow(`ws://${d.addr}/ws/logs/999999`);
    expect(unknown.code).toBe(4404);
    expect(unknown.frames).toEqual([{ type: "error", message: "run 999999 not found" }]);
  });
});

describe("the dashboard", () => {
  it("GET / serves the dashboard build (or the not-built page) and its assets", async () => {
    const res = await fetch(`${d.base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    const webIndex = join(import.meta.dirname, "../../dist/web/index.html");
    if (existsSync(webIndex)) {
      expect(html).toBe(readFileSync(webIndex, "utf8"));
      const asset = /(?:src|href)="\.\/(assets\/[^"]+)"/.exec(html)?.[1];
      expect(asset).toBeDefined();
      const a = await fetch(`${d.base}/${asset}`);
      expect(a.status).toBe(200);
    } else {
      expect(html).toContain("not built");
    }
  });
});
