/**
 * The HTTP(S) transport of `svc` (CONTRACT §1): the api.addr fallback when
 * there is no Unix socket, `--addr` and `SVC_ADDR` (no svc.yaml needed),
 * SVC_TOKEN as a bearer header on requests and on the log WebSocket, 401
 * messages, and HTTPS with SVC_CACERT.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasStackTrace, runSvc } from "./helpers/cli.js";
import { clientProject, spawnSvc, until, type ClientProject, type RunRow } from "./helpers/daemonClient.js";

const YAML = `jobs:
  hello:
    command: echo "hello over http"
    tags: [web]
  failing:
    command: echo "nope"; exit 4
    on_failure: ignore
  slow:
    command: for i in $(seq 1 600); do echo "tick $i"; sleep 0.1; done
`;

const json = <T>(text: string): T => JSON.parse(text) as T;

describe("api.addr fallback: a daemon without a Unix socket", () => {
  let p: ClientProject;
  let base: string;

  beforeAll(async () => {
    // A data dir whose socket path is over 108 bytes: the daemon serves TCP only.
    base = mkdtempSync(join(tmpdir(), "svc-http-"));
    p = clientProject({ "svc.yaml": YAML }, { dataDir: join(base, "d".repeat(120)) });
    await p.start();
  });
  afterAll(async () => {
    await p?.stop();
    p?.remove();
    if (base) rmSync(base, { recursive: true, force: true });
  });

  it("has no socket, only api.addr; svc talks HTTP (runs are triggered_by api)", async () => {
    expect(existsSync(join(p.dataDir, "svcd.sock"))).toBe(false);
    const r = await p.svc(["run", "hello", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const run = await until("the run over TCP", async () => {
      const res = await p.api<RunRow>("GET", `/api/runs/${json<{ run_id: number }>(r.stdout).run_id}`, undefined, { tcp: true });
      return res.body.status === "SUCCESS" ? res.body : null;
    });
    expect(run.triggered_by).toBe("api");
  });

  it("status, history, audit, export and pause work over HTTP", async () => {
    const status = await p.svc(["status", "--json"]);
    expect(json<{ jobs: { name: string }[] }>(status.stdout).jobs.map((j) => j.name)).toEqual(["failing", "hello", "slow"]);
    expect(json<{ runs: unknown[] }>((await p.svc(["history", "hello", "--json"])).stdout).runs.length).toBeGreaterThan(0);
    expect(json<{ total: number }>((await p.svc(["audit", "--json"])).stdout).total).toBeGreaterThan(0);
    expect(json<{ format: string }>((await p.svc(["export"])).stdout).format).toBe("svc-export");
    expect((await p.svc(["pause", "--tag", "web"])).stdout.trim()).toBe("paused 1 job with tag web: hello");
    expect((await p.svc(["resume", "hello"])).stdout.trim()).toBe("resumed hello");
  });

  it("run --wait follows the log through ws:// and exits with the run's outcome", async () => {
    const good = await p.svc(["run", "hello", "--wait"]);
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toContain("hello over http");
    const bad = await p.svc(["run", "failing", "--wait"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/FAILED \(exit 4/);
  });

  it("logs --tail receives live lines over HTTP", async () => {
    const id = json<{ run_id: number }>((await p.svc(["run", "slow", "--json"])).stdout).run_id;
    const tail = spawnSvc(p, ["logs", "slow", "--tail"]);
    try {
      await until("ticks", () => tail.stdout().includes("tick 3\n"), 20_000);
      await p.svc(["cancel", "slow"]);
      expect(await tail.exited).toBe(0);
      expect(tail.stderr()).toContain(`run ${id} of slow ended FAILED`);
    } finally {
      tail.kill("SIGKILL");
    }
  });

  it("--addr and SVC_ADDR reach the daemon from anywhere, without svc.yaml", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "svc-nowhere-"));
    try {
      const addr = p.addr();
      const viaFlag = await runSvc(["--addr", `http://${addr}`, "status", "--json"], { cwd: elsewhere });
      expect(viaFlag.code, viaFlag.stderr).toBe(0);
      expect(json<{ jobs: unknown[] }>(viaFlag.stdout).jobs).toHaveLength(3);
      const viaEnv = await runSvc(["tags", "list", "--json"], { cwd: elsewhere, env: { SVC_ADDR: addr } });
      expect(viaEnv.code, viaEnv.stderr).toBe(0);
      expect(json(viaEnv.stdout)).toEqual({ tags: [{ tag: "web", jobs: 1 }] });
      const dash = await runSvc(["dash", "--print", "--addr", `http://${addr}`], { cwd: elsewhere });
      expect(dash.stdout.trim()).toBe(`http://${addr}/`);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("stop works over HTTP and waits for the pid file to go", async () => {
    const pid = p.pid();
    const r = await p.svc(["stop"]);
    expect(r.stdout.trim()).toBe(`stopped the daemon (pid ${pid})`);
    expect(p.pid()).toBeNull();
    const after = await p.svc(["status"]);
    expect(after.code).toBe(1);
    expect(after.stderr.trim()).toBe(`svc: no daemon for ${p.path("svc.yaml")}: start it with \`svc start\``);
  });
});

describe("--addr errors", () => {
  it("a closed port: exit 1, names the address; a malformed address: exit 2", async () => {
    const closed = await runSvc(["--addr", "http://127.0.0.1:1", "status"]);
    expect(closed.code).toBe(1);
    expect(closed.stderr.trim()).toBe("svc: cannot reach the daemon at http://127.0.0.1:1/ (--addr): connection refused; is svcd running there?");
    const bad = await runSvc(["status"], { env: { SVC_ADDR: "ftp://example.org" } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("SVC_ADDR");
    expect(hasStackTrace(closed.stderr + bad.stderr)).toBe(false);
  });
});

/**
 * A stand-in for a daemon with `auth.type: bearer`: answers 401 (CONTRACT
 * §4 error shape, WWW-Authenticate) unless the bearer token is right, and
 * records the Authorization headers it saw, on requests and WS upgrades.
 */
interface AuthServer {
  url: string;
  seen: (string | undefined)[];
  close(): Promise<void>;
}

async function authServer(token: string): Promise<AuthServer> {
  const seen: (string | undefined)[] = [];
  const deny = (res: ServerResponse) =>
    res
      .writeHead(401, { "content-type": "application/json", "www-authenticate": 'Bearer realm="svc"' })
      .end(JSON.stringify({ error: { code: "unauthorized", message: "missing or invalid bearer token" } }));
  const server: Server = createHttpServer((req: IncomingMessage, res) => {
    seen.push(req.headers.authorization);
    if (req.headers.authorization !== `Bearer ${token}`) return deny(res);
    if (req.url === "/api/runs/1") {
      return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: 1, job_name: "x", status: "RUNNING" }));
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ tags: [{ tag: "secure", jobs: 1 }] }));
  });
  // The WebSocket upgrade is always refused: the client must say 401 there too.
  server.on("upgrade", (req: IncomingMessage, socket) => {
    seen.push(`upgrade ${req.headers.authorization}`);
    socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nwww-authenticate: Bearer realm="svc"\r\ncontent-length: 2\r\n\r\n{}');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe("bearer tokens (SVC_TOKEN)", () => {
  let srv: AuthServer;
  beforeAll(async () => {
    srv = await authServer("s3cret-token");
  });
  afterAll(async () => {
    await srv?.close();
  });

  it("sends SVC_TOKEN as Authorization: Bearer", async () => {
    const r = await runSvc(["tags", "list", "--json", "--addr", srv.url], { env: { SVC_TOKEN: "s3cret-token" } });
    expect(r.code, r.stderr).toBe(0);
    expect(json(r.stdout)).toEqual({ tags: [{ tag: "secure", jobs: 1 }] });
    expect(srv.seen.at(-1)).toBe("Bearer s3cret-token");
  });

  it("a missing token: exit 1, says 401 and how to set SVC_TOKEN", async () => {
    const r = await runSvc(["tags", "list", "--addr", srv.url]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `svc: 401 unauthorized: the daemon at ${srv.url}/ requires a bearer token and SVC_TOKEN is not set; set SVC_TOKEN to one of the tokens in auth.bearer.token_file of svcd.yaml (export SVC_TOKEN=...)`,
    );
  });

  it("a wrong token: exit 1, says the token was rejected (401) and how to set SVC_TOKEN", async () => {
    const r = await runSvc(["status", "--addr", srv.url], { env: { SVC_TOKEN: "wrong" } });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^svc: 401 unauthorized: the daemon at .* rejected SVC_TOKEN; set SVC_TOKEN to /);
    expect(r.stderr).not.toContain("wrong"); // never echo the secret
  });

  it("the log WebSocket sends the token too, and a 401 on the upgrade says so", async () => {
    const r = await runSvc(["logs", "--run", "1", "--tail", "--addr", srv.url], { env: { SVC_TOKEN: "s3cret-token" } });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^svc: 401 unauthorized: the daemon at .* rejected SVC_TOKEN; set SVC_TOKEN/);
    expect(srv.seen.at(-1)).toBe("upgrade Bearer s3cret-token");
  });

});

describe("a real svcd with auth.type bearer", () => {
  let p: ClientProject;
  let url: string;
  const ADMIN = "admin-token-0123456789";
  const VIEWER = "viewer-token-9876543210";

  beforeAll(async () => {
    p = clientProject({
      "svc.yaml": YAML,
      "svcd.yaml": "auth:\n  type: bearer\n  bearer:\n    token_file: tokens.txt\n",
      "tokens.txt": `# operators\n${ADMIN}\n${VIEWER} viewer\n`,
    });
    await p.start(); // readiness through the Unix socket, whose peers are trusted
    url = `http://${p.addr()}`;
  });
  afterAll(async () => {
    await p?.stop();
    p?.remove();
  });

  it("every kind of command works over HTTP with SVC_TOKEN, runs are triggered by the token principal", async () => {
    const env = { SVC_TOKEN: ADMIN };
    const run = await p.svc(["run", "hello", "--wait", "--addr", url], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("hello over http");
    const history = json<{ runs: RunRow[] }>((await p.svc(["history", "hello", "--json", "--addr", url], { env })).stdout);
    expect(history.runs[0]!.triggered_by).toMatch(/^token:[0-9a-f]{8}$/);
    expect((await p.svc(["logs", "hello", "--addr", url], { env })).stdout).toContain("hello over http");
    expect(json<{ total: number }>((await p.svc(["audit", "--json", "--addr", url], { env })).stdout).total).toBeGreaterThan(0);
    expect((await p.svc(["pause", "hello", "--addr", url], { env })).code).toBe(0);
    expect((await p.svc(["resume", "hello", "--addr", url], { env })).code).toBe(0);
  });

  it("without a token or with a wrong one: exit 1, 401 and how to set SVC_TOKEN, the token never echoed", async () => {
    const none = await p.svc(["status", "--addr", url]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/401 unauthorized: .*SVC_TOKEN is not set/);
    const wrong = await p.svc(["status", "--addr", url], { env: { SVC_TOKEN: "not-a-token" } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/rejected SVC_TOKEN/);
    expect(wrong.stderr).not.toContain("not-a-token");
  });

  it("svc start succeeds without a Unix socket even though the daemon answers 401", async () => {
    const base = mkdtempSync(join(tmpdir(), "svc-http-auth-"));
    const q = clientProject(
      { "svc.yaml": YAML, "svcd.yaml": "auth:\n  type: bearer\n  bearer:\n    token_file: tokens.txt\n", "tokens.txt": `${ADMIN}\n` },
      { dataDir: join(base, "d".repeat(120)) },
    );
    try {
      expect(await q.start()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(existsSync(join(q.dataDir, "svcd.sock"))).toBe(false);
      const r = await q.svc(["status"], { env: { SVC_TOKEN: ADMIN } });
      expect(r.code, r.stderr).toBe(0);
    } finally {
      await q.stop();
      q.remove();
      rmSync(base, { recursive: true, force: true });
    }
  });

  it("a viewer token reads but may not trigger (403)", async () => {
    const env = { SVC_TOKEN: VIEWER };
    expect((await p.svc(["status", "--addr", url], { env })).code).toBe(0);
    const r = await p.svc(["run", "hello", "--addr", url], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/role "viewer" may not POST \/api\/jobs\/hello\/run/);
  });
});

describe("HTTPS with SVC_CACERT", () => {
  let dir: string;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-tls-"));
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
      "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
      "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"),
    ], { stdio: "ignore" });
    server = createHttpsServer({ key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) }, (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ tags: [{ tag: "tls", jobs: 2 }] }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it("verifies the daemon's certificate against SVC_CACERT", async () => {
    const r = await runSvc(["tags", "list", "--json", "--addr", url], { env: { SVC_CACERT: join(dir, "cert.pem") } });
    expect(r.code, r.stderr).toBe(0);
    expect(json(r.stdout)).toEqual({ tags: [{ tag: "tls", jobs: 2 }] });
  });

  it("without SVC_CACERT a self-signed certificate is refused with a hint", async () => {
    const r = await runSvc(["tags", "list", "--addr", url]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^svc: TLS: cannot verify the certificate of the daemon at https:.* set SVC_CACERT/);
  });

  it("an unreadable SVC_CACERT is named", async () => {
    const r = await runSvc(["tags", "list", "--addr", url], { env: { SVC_CACERT: join(dir, "missing.pem") } });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`svc: SVC_CACERT=${join(dir, "missing.pem")}: cannot read it (ENOENT)`);
  });
});
