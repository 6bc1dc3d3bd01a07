/**
 * The HTTP surface through the built svcd: CORS (`api.cors.*`: allowed and
 * refused origins, preflights), `api.base_path` (API, WebSocket, dashboard,
 * redirect, RBAC after the prefix is stripped, the Unix socket without it),
 * `api.timeouts.*` (slow headers, slow bodies and idle keep-alive
 * connections are cut; a quiet WebSocket is not) and the startup warnings
 * for a non-loopback bind and a `*` origin.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, project, startDaemon, until, type DaemonProc } from "../helpers/daemonKit.js";
import { runSvc } from "./helpers/cli.js";
import { bearer, call, target, wsOpen, type Target } from "./helpers/security.js";

// hello allows concurrent runs: several tests trigger it, and under forbid a run still going from an
// earlier test (a slow machine) would make the next trigger SKIPPED, with no line to stream.
const YAML = `jobs:
  hello:
    command: echo "hello under a prefix"
    frequency: manual
    concurrency: allow
  quiet:
    command: echo start; sleep 4; echo done
    frequency: manual
`;
const ADMIN = "http-admin-0c2b9e51d7a4";
const VIEWER = "http-viewer-6f3a2e1d0c9b";
const HELLO = "http-hello-8e7d6c5b4a39";
const ORIGIN = "https://ops.example.com";

describe("CORS, base path and timeouts", () => {
  let dir: string;
  let d: DaemonProc;
  let t: Target;
  const admin = { authorization: bearer(ADMIN) };

  beforeAll(async () => {
    dir = project(YAML, {
      daemon: `api:
  base_path: /svc/
  cors:
    allowed_origins: ["${ORIGIN}", "http://localhost:5173"]
    allow_credentials: true
  timeouts:
    read_header: 1s
    read: 1500ms
    write: 2s
    idle: 1s
auth:
  type: bearer
  bearer:
    token_file: tokens
  rbac:
    hello_only: ["POST /api/jobs/hello/run", "GET /api/runs/*"]
`,
      files: { tokens: `${ADMIN}\n${VIEWER} viewer\n${HELLO} hello_only\n` },
    });
    d = await startDaemon(dir);
    t = target(d.addr);
  });
  afterAll(async () => {
    await d?.stop();
    if (dir) cleanup(dir);
  });

  describe("CORS", () => {
    it("gives an allowed origin its own Access-Control-Allow-Origin with credentials, also on a 401", async () => {
      const ok = await call(t, "GET", "/svc/api/status", { headers: { ...admin, origin: ORIGIN } });
      expect(ok.status).toBe(200);
      expect(ok.headers["access-control-allow-origin"]).toBe(ORIGIN);
      expect(ok.headers["access-control-allow-credentials"]).toBe("true");
      expect(ok.headers.vary).toMatch(/Origin/);
      const denied = await call(t, "GET", "/svc/api/status", { headers: { origin: ORIGIN } });
      expect(denied.status).toBe(401);
      expect(denied.headers["access-control-allow-origin"], "the page can see why it failed").toBe(ORIGIN);
    });

    it("sends no CORS header to another origin (the browser keeps the answer from that page)", async () => {
      for (const origin of ["https://evil.example", "https://ops.example.com.evil.example", "null"]) {
        const r = await call(t, "GET", "/svc/api/status", { headers: { ...admin, origin } });
        expect(r.status).toBe(200);
        expect(r.headers["access-control-allow-origin"], origin).toBeUndefined();
        expect(r.headers["access-control-allow-credentials"]).toBeUndefined();
      }
      // Without an Origin header (curl, svc) nothing CORS-related is sent either.
      expect((await call(t, "GET", "/svc/api/status", { headers: admin })).headers["access-control-allow-origin"]).toBeUndefined();
    });

    it("answers an allowed origin's preflight without credentials; another origin's preflight gets nothing", async () => {
      const preflight = (origin: string) =>
        call(t, "OPTIONS", "/svc/api/jobs/hello/run", {
          headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
        });
      const ok = await preflight(ORIGIN);
      expect(ok.status).toBe(204);
      expect(ok.headers["access-control-allow-origin"]).toBe(ORIGIN);
      expect(ok.headers["access-control-allow-methods"]).toContain("POST");
      expect(ok.headers["access-control-allow-headers"]).toMatch(/Authorization/i);
      expect(ok.headers["access-control-allow-credentials"]).toBe("true");
      // Without Access-Control-Request-Method it was a 400 in plain text, outside the error catalogue's shape.
      const loose = await call(t, "OPTIONS", "/svc/api/jobs/hello/run", { headers: { origin: ORIGIN } });
      expect(loose.status).toBe(204);
      const refused = await preflight("https://evil.example");
      expect(refused.status).toBe(401);
      expect(refused.headers["access-control-allow-origin"]).toBeUndefined();
      expect(refused.headers["access-control-allow-methods"]).toBeUndefined();
    });
  });

  describe("cross-origin requests", () => {
    it("refuses a POST or a WebSocket from another site's page, whatever its credentials; allows its own and listed origins", async () => {
      const post = (origin: string | undefined) =>
        call(t, "POST", "/svc/api/jobs/hello/run", { headers: { ...admin, ...(origin ? { origin } : {}) }, body: {} });
      const evil = await post("https://evil.example");
      expect(evil.status).toBe(403);
      expect(evil.json.error).toEqual({
        code: "forbidden",
        message: "cross-origin request from https://evil.example refused: add that origin to api.cors.allowed_origins to allow it",
      });
      expect((await post("null")).status, "a sandboxed page").toBe(403);
      expect((await post(ORIGIN)).status, "a listed origin").toBe(202);
      expect((await post(`http://${d.addr}`)).status, "the dashboard itself").toBe(202);
      expect((await post(undefined)).status, "curl, svc").toBe(202);
      // Reading is left to CORS (the browser hides the answer); GETs change nothing.
      expect((await call(t, "GET", "/svc/api/status", { headers: { ...admin, origin: "https://evil.example" } })).status).toBe(200);
      const run = await post(undefined);
      const ws = await wsOpen(`ws://${d.addr}/svc/ws/logs/${run.json.run_id}`, { headers: { ...admin, origin: "https://evil.example" } });
      expect(ws.ok ? 101 : ws.status, "cross-site WebSocket hijacking").toBe(403);
      const own = await wsOpen(`ws://${d.addr}/svc/ws/logs/${run.json.run_id}`, { headers: { ...admin, origin: `http://${d.addr}` } });
      expect(own.ok).toBe(true);
      if (own.ok) await own.closed;
    });
  });

  describe("api.base_path", () => {
    it("mounts the API under the prefix; outside it is 404 and the bare prefix redirects to prefix/", async () => {
      expect((await call(t, "GET", "/svc/api/status", { headers: admin })).status).toBe(200);
      const outside = await call(t, "GET", "/api/status", { headers: admin });
      expect(outside.status).toBe(404);
      expect(outside.json.error).toEqual({ code: "not_found", message: "no route GET /api/status: the API is under /svc/ (api.base_path)" });
      expect((await call(t, "GET", "/svcx/api/status", { headers: admin })).status).toBe(404);
      const bare = await call(t, "GET", "/svc?tab=runs");
      expect(bare.status).toBe(308);
      expect(bare.headers.location).toBe("/svc/?tab=runs");
      const page = await call(t, "GET", "/svc/");
      expect(page.status, "the dashboard page needs no credentials").toBe(200);
      expect(page.headers["content-type"]).toContain("text/html");
    });

    it("matches RBAC rules against the path without the prefix", async () => {
      expect((await call(t, "GET", "/svc/api/jobs", { headers: { authorization: bearer(VIEWER) } })).status).toBe(200);
      const denied = await call(t, "POST", "/svc/api/jobs/hello/run", { headers: { authorization: bearer(VIEWER) }, body: {} });
      expect(denied.status).toBe(403);
      expect(denied.json.error.message).toBe('role "viewer" may not POST /api/jobs/hello/run (auth.rbac)');
      const run = await call(t, "POST", "/svc/api/jobs/hello/run", { headers: { authorization: bearer(HELLO) }, body: {} });
      expect(run.status).toBe(202);
      expect((await call(t, "POST", "/svc/api/jobs/quiet/run", { headers: { authorization: bearer(HELLO) }, body: {} })).status).toBe(403);
      expect((await call(t, "GET", `/svc/api/runs/${run.json.run_id}`, { headers: { authorization: bearer(HELLO) } })).status).toBe(200);
    });

    it("serves the WebSocket under the prefix too, and the Unix socket without it", async () => {
      const run = await call(t, "POST", "/svc/api/jobs/hello/run", { headers: admin, body: {} });
      expect(run.status).toBe(202);
      expect(run.json.status, "a run that starts (not SKIPPED behind an earlier one)").not.toBe("SKIPPED");
      const outside = await wsOpen(`ws://${d.addr}/ws/logs/${run.json.run_id}`, { headers: admin });
      expect(outside.ok ? 101 : outside.status).toBe(404);
      const ws = await wsOpen(`ws://${d.addr}/svc/ws/logs/${run.json.run_id}`, { headers: admin });
      expect(ws.ok).toBe(true);
      if (ws.ok) {
        expect(await ws.closed).toBe(1000);
        expect(ws.frames().some((f) => f.line === "hello under a prefix")).toBe(true);
      }
      expect((await d.sock("GET", "/api/status")).status).toBe(200);
      const status = await runSvc(["status", "--json"], { cwd: dir });
      expect(status.code, status.stderr).toBe(0);
      const remote = await runSvc(["status", "--json"], { env: { SVC_ADDR: `http://${d.addr}/svc`, SVC_TOKEN: VIEWER } });
      expect(remote.code, remote.stderr).toBe(0);
    });
  });

  describe("api.timeouts", () => {
    it("cuts a connection whose headers never finish (read_header) and one whose body never comes (read)", async () => {
      const slowHeaders = await rawUntilClosed(t, "GET /svc/api/status HTTP/1.1\r\nHost: x\r\nX-Slow: ");
      expect(slowHeaders.text).toMatch(/^HTTP\/1\.1 408 /);
      expect(slowHeaders.ms).toBeLessThan(6_000);
      const slowBody = await rawUntilClosed(
        t,
        `POST /svc/api/config/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"file":`,
      );
      expect(slowBody.text).toMatch(/^HTTP\/1\.1 408 /);
      expect(slowBody.ms).toBeLessThan(6_000);
    });

    it("closes an idle kept-alive connection after api.timeouts.idle", async () => {
      const s = connect(t.port, t.host);
      const got: Buffer[] = [];
      s.on("data", (c: Buffer) => got.push(c));
      const closedAt = new Promise<number>((r) => s.on("close", () => r(Date.now())));
      await new Promise((r) => s.once("connect", r));
      s.write(`GET /svc/api/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN}\r\n\r\n`);
      await until("the answer", () => Buffer.concat(got).toString().includes("\r\n\r\n"));
      const answeredAt = Date.now();
      expect(Buffer.concat(got).toString()).toMatch(/^HTTP\/1\.1 200 /);
      const idleMs = (await closedAt) - answeredAt;
      expect(idleMs).toBeGreaterThan(500);
      expect(idleMs).toBeLessThan(5_000);
    });

    it("does not cut a quiet WebSocket log stream (write, idle and read timeouts do not apply after the upgrade)", async () => {
      const run = await call(t, "POST", "/svc/api/jobs/quiet/run", { headers: admin, body: {} });
      const ws = await wsOpen(`ws://${d.addr}/svc/ws/logs/${run.json.run_id}`, { headers: admin });
      expect(ws.ok).toBe(true);
      if (!ws.ok) return;
      const opened = Date.now();
      expect(await ws.closed).toBe(1000);
      expect(Date.now() - opened, "open through the job's 4 s of silence (write is 2 s)").toBeGreaterThan(3_000);
      const frames = ws.frames().map((f) => f.line ?? f.type);
      expect(frames.filter((f) => f === "start" || f === "done")).toEqual(["start", "done"]);
      expect(frames.at(-1)).toBe("end");
    }, 20_000);
  });

  it("does not warn about exposure on a loopback bind", () => {
    expect(d.output()).not.toContain("reachable from other machines");
  });
});

describe("startup warnings", () => {
  let dir: string;
  let d: DaemonProc;

  beforeAll(async () => {
    dir = project(YAML, { daemon: `api:\n  addr: 0.0.0.0:0\n  cors:\n    allowed_origins: ["*"]\nlog:\n  format: json\n` });
    d = await startDaemon(dir);
  });
  afterAll(async () => {
    await d?.stop();
    if (dir) cleanup(dir);
  });

  it("warns prominently, naming the address, when a non-loopback bind has neither TLS nor auth", async () => {
    await until("the warning", () => d.output().includes("reachable from other machines"));
    const line = d.output().split("\n").find((l) => l.includes("reachable from other machines"))!;
    const entry = JSON.parse(line);
    expect(entry.level).toBe("warn");
    expect(entry.msg).toBe(
      `WARNING: the API listens on ${d.addr}, reachable from other machines, without TLS (api.tls) and without authentication (auth.type is none): ` +
        "anyone who can reach it can run, cancel and reconfigure jobs, which run shell commands as this user. Bind 127.0.0.1 (api.addr) or enable both api.tls and auth.",
    );
    expect(d.addr).toMatch(/^0\.0\.0\.0:\d+$/);
  });

  it("answers on its loopback address to no DNS name when there is no auth (DNS rebinding)", async () => {
    const port = Number(d.addr.slice(d.addr.lastIndexOf(":") + 1));
    const t = { host: "127.0.0.1", port };
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `svc.localhost:${port}`, `svc:${port}`, `10.1.2.3:${port}`, "x"]) {
      expect((await call(t, "GET", "/api/status", { headers: { host } })).status, host).toBe(200);
    }
    for (const host of [`evil.example:${port}`, "evil.example", "evil.example."]) {
      const rebound = await call(t, "GET", "/api/status", { headers: { host } });
      expect(rebound.status, host).toBe(403);
      expect(rebound.json.error.message).toContain(`Host "${host}" is a DNS name`);
    }
    expect((await call(t, "GET", "/", { headers: { host: `evil.example:${port}` } })).status, "the dashboard too").toBe(403);
  });

  it("warns about a * CORS origin and then allows every origin (without credentials)", async () => {
    expect(d.output()).toContain('allowed origin \\"*\\" lets any web page call the API');
    const port = Number(d.addr.slice(d.addr.lastIndexOf(":") + 1));
    const r = await call({ host: "127.0.0.1", port }, "GET", "/api/status", { headers: { origin: "https://anywhere.example" } });
    expect(r.headers["access-control-allow-origin"]).toBe("*");
    expect(r.headers["access-control-allow-credentials"]).toBeUndefined();
  });
});

/** Sends `text` and never finishes the request; resolves with what came back once the server closes. */
function rawUntilClosed(t: Target, text: string): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const s: Socket = connect(t.port, t.host, () => s.write(text));
    const chunks: Buffer[] = [];
    s.on("data", (c: Buffer) => chunks.push(c));
    s.on("close", () => resolve({ text: Buffer.concat(chunks).toString("latin1"), ms: Date.now() - started }));
    s.on("error", () => undefined);
    setTimeout(() => {
      s.destroy();
      reject(new Error(`the server kept the connection open: ${Buffer.concat(chunks).toString("latin1")}`));
    }, 15_000).unref();
  });
}
