/**
 * TLS through the built svcd (SPEC `api.tls.*`): a 1.3 minimum refuses a
 * TLS-1.2-only client, a 1.2 minimum accepts it, mutual TLS refuses a
 * client without a certificate from `client_ca`, and `svc` talks HTTPS with
 * SVC_CACERT, SVC_TOKEN and SVC_CLIENT_CERT/KEY, both through `--addr`-style
 * SVC_ADDR and through the api.addr fallback (which holds host:port only:
 * the scheme comes from svcd.yaml). Certificates are made here with openssl.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, type TLSSocket } from "node:tls";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { project, runDaemonOnce, startDaemon, until, type DaemonProc } from "../helpers/daemonKit.js";
import { runSvc } from "./helpers/cli.js";
import { bearer, call, makeCerts, target, wsOpen, type Certs, type Target } from "./helpers/security.js";

const YAML = `jobs:
  hello:
    command: echo "hello over tls"
    frequency: manual
`;
const TOKEN = "tls-token-5be1c0ffee9d2a47";

let tmp: string;
let certs: Certs;

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "svc-tls-"));
  mkdirSync(join(tmp, "pki"));
  certs = makeCerts(join(tmp, "pki"));
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/**
 * The TLS version of a connection that got an HTTP answer, or `error: ...`
 * for one refused (TLS 1.3 refuses a missing client certificate only after
 * the client's side of the handshake, so one request is sent and read).
 */
function handshake(t: Target, opts: { ca?: Buffer; cert?: Buffer; key?: Buffer; maxVersion?: "TLSv1.2" | "TLSv1.3" }): Promise<string> {
  return new Promise((resolve) => {
    let version: string | null = null;
    const s: TLSSocket = connect({ host: t.host, port: t.port, servername: "localhost", ...opts }, () => {
      version = s.getProtocol() ?? "?";
      s.write("GET /api/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    });
    s.once("data", (chunk: Buffer) => {
      s.destroy();
      resolve(chunk.toString("latin1").startsWith("HTTP/1.1 ") ? (version ?? "?") : "error: not HTTP");
    });
    s.once("error", (e) => resolve(`error: ${e.message}`));
    s.once("close", () => resolve("error: closed without an answer"));
    s.setTimeout(10_000, () => s.destroy(new Error("timed out")));
  });
}

describe("TLS 1.3 minimum, bearer auth, api.addr fallback (no Unix socket)", () => {
  let dir: string;
  let d: DaemonProc;
  let t: Target;
  const tls = () => ({ ca: readFileSync(certs.ca) });

  beforeAll(async () => {
    // A project path so long that <data>/svcd.sock cannot be bound: svc falls back to api.addr.
    dir = join(tmp, "p".repeat(100));
    mkdirSync(dir);
    writeFileSync(join(dir, "tokens"), `${TOKEN}\n`, { mode: 0o600 });
    project(YAML, {
      dir,
      daemon: `api:
  tls:
    enabled: true
    cert: ${certs.serverCert}
    key: ${certs.serverKey}
    min_version: "1.3"
auth:
  type: bearer
  bearer:
    token_file: tokens
`,
    });
    d = await startDaemon(dir);
    t = target(d.addr, true);
  });
  afterAll(async () => {
    await d?.stop();
  });

  it("writes host:port to api.addr and serves HTTPS with TLS 1.3", async () => {
    expect(d.addr).toMatch(/^127\.0\.0\.1:\d+$/);
    await until("the started line", () => d.output().includes(`API on https://${d.addr}/`));
    expect(await handshake(t, tls())).toBe("TLSv1.3");
    const r = await call(t, "GET", "/api/status", { tls: tls(), headers: { authorization: bearer(TOKEN) } });
    expect(r.status).toBe(200);
    expect((await call(t, "GET", "/api/status", { tls: tls() })).status, "TLS does not replace auth").toBe(401);
  });

  it("refuses a TLS-1.2-only client, a client that does not trust the certificate, and plain HTTP", async () => {
    expect(await handshake(t, { ...tls(), maxVersion: "TLSv1.2" })).toMatch(/^error: .*(protocol version|unsupported protocol|alert)/i);
    await expect(call(t, "GET", "/api/status", { headers: { authorization: bearer(TOKEN) } })).rejects.toThrow(/self.signed|unable to (get|verify)|certificate/i);
    const plain = await call({ ...t, https: false }, "GET", "/api/status").then(
      (r) => r.status,
      () => "refused",
    );
    expect(plain).not.toBe(200);
  });

  it("streams logs over wss:// with the bearer subprotocol", async () => {
    const run = await call(t, "POST", "/api/jobs/hello/run", { tls: tls(), headers: { authorization: bearer(TOKEN) }, body: {} });
    expect(run.status).toBe(202);
    const ws = await wsOpen(`wss://${d.addr}/ws/logs/${run.json.run_id}`, { protocols: [`bearer.${TOKEN}`], tls: tls() });
    expect(ws.ok).toBe(true);
    if (!ws.ok) return;
    expect(await ws.closed).toBe(1000);
    expect(ws.frames().some((f) => f.line === "hello over tls")).toBe(true);
  });

  it("svc uses https for the api.addr fallback (from svcd.yaml), with SVC_CACERT and SVC_TOKEN", async () => {
    const env = { SVC_CACERT: certs.ca, SVC_TOKEN: TOKEN };
    const ok = await runSvc(["status", "--json"], { cwd: dir, env });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).jobs.map((j: { name: string }) => j.name)).toEqual(["hello"]);

    const noCa = await runSvc(["status"], { cwd: dir, env: { SVC_TOKEN: TOKEN } });
    expect(noCa.code).toBe(1);
    expect(noCa.stderr).toContain(`https://${d.addr}/`);
    expect(noCa.stderr).toContain("SVC_CACERT");

    const noToken = await runSvc(["status"], { cwd: dir, env: { SVC_CACERT: certs.ca } });
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toContain("401 unauthorized");
    expect(noToken.stderr).toContain("SVC_TOKEN is not set");

    const wrong = await runSvc(["status"], { cwd: dir, env: { SVC_CACERT: certs.ca, SVC_TOKEN: "wrong-token" } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("rejected SVC_TOKEN");
    expect(wrong.stderr).not.toContain("wrong-token");
  });

  it("svc run --wait over SVC_ADDR=https://… follows the log through wss:// with the token", async () => {
    const r = await runSvc(["run", "hello", "--wait"], { env: { SVC_ADDR: `https://${d.addr}`, SVC_CACERT: certs.ca, SVC_TOKEN: TOKEN } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("hello over tls");
  });
});

describe("TLS 1.2 minimum with mutual TLS (api.tls.client_ca)", () => {
  let dir: string;
  let d: DaemonProc;
  let t: Target;
  const client = () => ({ ca: readFileSync(certs.ca), cert: readFileSync(certs.clientCert), key: readFileSync(certs.clientKey) });

  beforeAll(async () => {
    dir = project(YAML, {
      daemon: `api:
  tls:
    enabled: true
    cert: ${certs.serverCert}
    key: ${certs.serverKey}
    min_version: "1.2"
    client_ca: ${certs.ca}
`,
    });
    d = await startDaemon(dir);
    t = target(d.addr, true);
  });
  afterAll(async () => {
    await d?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("accepts a TLS-1.2-only client that presents a certificate signed by client_ca", async () => {
    expect(await handshake(t, { ...client(), maxVersion: "TLSv1.2" })).toBe("TLSv1.2");
    expect(await handshake(t, client())).toBe("TLSv1.3");
    expect((await call(t, "GET", "/api/status", { tls: client() })).status).toBe(200);
  });

  it("refuses the handshake without a client certificate or with one from another CA (1.2 and 1.3)", async () => {
    const ca = readFileSync(certs.ca);
    const stranger = { ca, cert: readFileSync(certs.strangerCert), key: readFileSync(certs.strangerKey) };
    for (const maxVersion of ["TLSv1.2", "TLSv1.3"] as const) {
      // No HTTP answer in any case. Without a certificate: "alert handshake failure" (1.2),
      // "tlsv13 alert certificate required" (1.3); with a stranger's, an alert or a plain close.
      expect(await handshake(t, { ca, maxVersion }), `no certificate, ${maxVersion}`).toMatch(/^error: .*alert (handshake failure|certificate required)/);
      expect(await handshake(t, { ...stranger, maxVersion }), `stranger's certificate, ${maxVersion}`).toMatch(/^error: /);
    }
    await expect(call(t, "GET", "/api/status", { tls: { ca } })).rejects.toThrow();
  });

  it("svc connects with SVC_CLIENT_CERT and SVC_CLIENT_KEY, and fails clearly without them", async () => {
    const env = { SVC_ADDR: `https://${d.addr}`, SVC_CACERT: certs.ca };
    const ok = await runSvc(["status", "--json"], { env: { ...env, SVC_CLIENT_CERT: certs.clientCert, SVC_CLIENT_KEY: certs.clientKey } });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    const without = await runSvc(["status"], { env });
    expect(without.code).toBe(1);
    expect(without.stderr).toContain(`https://${d.addr}/`);
  });

  it("keeps the Unix socket plain HTTP (file permissions are its auth)", async () => {
    expect((await d.sock("GET", "/api/status")).status).toBe(200);
  });
});

describe("TLS files the daemon cannot use", () => {
  it("refuses to start with a missing key file or a file that is not PEM, naming them", async () => {
    const dir = project(YAML);
    try {
      writeFileSync(join(dir, "svcd.yaml"), `api:\n  tls:\n    enabled: true\n    cert: ${certs.serverCert}\n    key: ${join(dir, "missing.key")}\n`);
      const missing = await runDaemonOnce(dir);
      expect(missing.code).toBe(1);
      expect(missing.output).toContain(`api.tls.key: ${join(dir, "missing.key")} does not exist`);

      writeFileSync(join(dir, "garbage.pem"), "not a certificate\n");
      writeFileSync(join(dir, "svcd.yaml"), `api:\n  tls:\n    enabled: true\n    cert: ${join(dir, "garbage.pem")}\n    key: ${certs.serverKey}\n`);
      const garbage = await runDaemonOnce(dir);
      expect(garbage.code).toBe(1);
      expect(garbage.output).toContain(`svcd: TLS: api.tls.cert ${join(dir, "garbage.pem")}, api.tls.key ${certs.serverKey}: not a usable PEM certificate and key`);

      // A key that does not belong to the certificate.
      writeFileSync(join(dir, "svcd.yaml"), `api:\n  tls:\n    enabled: true\n    cert: ${certs.serverCert}\n    key: ${certs.clientKey}\n`);
      const mismatch = await runDaemonOnce(dir);
      expect(mismatch.code).toBe(1);
      expect(mismatch.output).toContain("not a usable PEM certificate and key");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
