/**
 * Authentication and RBAC through the built svcd (SPEC "Authentication",
 * CONTRACT §5): bearer tokens from a token file (roles, SIGHUP reload, a
 * missing or empty file), the inline token, HTTP Basic with bcrypt, each
 * over HTTP and the WebSocket (header and `bearer.<token>` subprotocol),
 * every built-in role against a read, a trigger and an admin route, a
 * custom and an unknown role, malformed and oversized headers.
 */
import { connect } from "node:net";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, project, runDaemonOnce, startDaemon, until, type DaemonProc } from "../helpers/daemonKit.js";
import { basic, bearer, call, target, tokenLabel, wsOpen, type Target } from "./helpers/security.js";

// concurrency: allow, so that a test's run is never SKIPPED by one an earlier test left running.
const YAML = `jobs:
  hello:
    command: echo "hello from svc"
    frequency: manual
    concurrency: allow
`;

const T = {
  admin: "adm-4d1c8e0f9a7b6c5d4e3f2a1b",
  viewer: "view-8b7a6c5d4e3f2a1b0c9d",
  operator: "oper-1a2b3c4d5e6f7a8b9c0d",
  auditor: "audi-0f1e2d3c4b5a69788796",
  ghost: "ghost-5a4b3c2d1e0f9e8d7c6b",
  later: "late-77aa88bb99cc00dd11ee",
  onejob: "onej-0a9b8c7d6e5f4a3b2c1d",
};

const tokenFile = (lines: string[]) => `# svc tokens: <token> [role]\n\n${lines.join("\n")}\n`;
const INITIAL = [T.admin, `${T.viewer} viewer`, `${T.operator}   operator`, `${T.auditor} auditor`, `${T.ghost} nosuchrole`, `${T.onejob} onejob`];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The routes every role is tried against: a read, a trigger and an admin-only action. */
const READ = ["GET", "/api/jobs"] as const;
const TRIGGER = ["POST", "/api/jobs/hello/run"] as const;
const ADMIN = ["POST", "/api/config/validate"] as const;

describe("auth.type bearer with a token file", () => {
  let dir: string;
  let d: DaemonProc;
  let t: Target;
  const tokens = () => join(dir, "secrets", "tokens");
  const as = (token: string | null, method: string, path: string, body?: unknown) =>
    call(t, method, path, { headers: token === null ? {} : { authorization: bearer(token) }, body });

  beforeAll(async () => {
    dir = project(YAML, {
      daemon: `auth:
  type: bearer
  bearer:
    token_file: secrets/tokens
  rbac:
    auditor: ["GET /api/audit", "GET /api/status"]
    onejob: ["GET /api/**", "POST /api/jobs/backfills/**"]
log:
  level: debug
  format: json
`,
    });
    project(YAML, { dir, files: { "secrets/tokens": tokenFile(INITIAL) } });
    d = await startDaemon(dir);
    t = target(d.addr);
  });
  afterAll(async () => {
    await d?.stop();
    if (dir) cleanup(dir);
  });

  it("answers 401 with WWW-Authenticate and the error shape without a token, on every API route, even unknown ones", async () => {
    for (const [method, path] of [["GET", "/api/status"], READ, TRIGGER, ADMIN, ["GET", "/api/openapi.json"], ["GET", "/api/no-such-route"]] as const) {
      const r = await as(null, method, path, method === "POST" ? {} : undefined);
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(r.headers["www-authenticate"]).toBe('Bearer realm="svc"');
      expect(r.json).toEqual({ error: { code: "unauthorized", message: "authentication required: send Authorization: Bearer <token>" } });
    }
  });

  it("serves the dashboard page without credentials (the only exempt route)", async () => {
    const page = await as(null, "GET", "/");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toContain("text/html");
    const asset = await as(null, "GET", "/assets/no-such-file.js");
    expect(asset.status, "a missing asset is 404, not 401").toBe(404);
  });

  it("refuses a wrong token (invalid_token) and accepts every token of the file", async () => {
    const wrong = await as("not-a-token", "GET", "/api/status");
    expect(wrong.status).toBe(401);
    expect(wrong.headers["www-authenticate"]).toBe('Bearer realm="svc", error="invalid_token"');
    expect(wrong.json.error).toEqual({ code: "unauthorized", message: "invalid bearer token" });
    // A prefix or an extension of a real token is just as wrong.
    expect((await as(T.admin.slice(0, -1), "GET", "/api/status")).status).toBe(401);
    expect((await as(`${T.admin}x`, "GET", "/api/status")).status).toBe(401);
    for (const token of [T.admin, T.viewer, T.operator, T.auditor]) expect((await as(token, "GET", "/api/status")).status).toBe(200);
    // The scheme is case-insensitive (RFC 7235).
    expect((await call(t, "GET", "/api/status", { headers: { authorization: `bearer ${T.admin}` } })).status).toBe(200);
  });

  it("applies the built-in roles to a read, a trigger and an admin route", async () => {
    const expected: Record<string, [number, number, number]> = {
      admin: [200, 202, 200],
      operator: [200, 202, 403],
      viewer: [200, 403, 403],
    };
    const validateBody = { file: "svc.yaml", content: YAML };
    for (const [role, [read, trigger, admin]] of Object.entries(expected)) {
      const token = T[role as keyof typeof T];
      expect((await as(token, ...READ)).status, `${role} ${READ.join(" ")}`).toBe(read);
      expect((await as(token, ...TRIGGER, {})).status, `${role} ${TRIGGER.join(" ")}`).toBe(trigger);
      expect((await as(token, ...ADMIN, validateBody)).status, `${role} ${ADMIN.join(" ")}`).toBe(admin);
    }
    const denied = await as(T.viewer, ...TRIGGER, {});
    expect(denied.json.error).toEqual({ code: "forbidden", message: 'role "viewer" may not POST /api/jobs/hello/run (auth.rbac)' });
    // The operator may not stop or reload the daemon either.
    expect((await as(T.operator, "POST", "/api/daemon/stop", {})).status).toBe(403);
  });

  it("applies a custom role, and refuses everything to a role auth.rbac does not define", async () => {
    expect((await as(T.auditor, "GET", "/api/audit")).status).toBe(200);
    expect((await as(T.auditor, "GET", "/api/status")).status).toBe(200);
    expect((await as(T.auditor, ...READ)).status).toBe(403);
    expect((await as(T.auditor, ...TRIGGER, {})).status).toBe(403);
    for (const [method, path] of [["GET", "/api/status"], READ, TRIGGER] as const) {
      const r = await as(T.ghost, method, path, method === "POST" ? {} : undefined);
      expect(r.status).toBe(403);
      // The role is not quoted: a token file line written the wrong way round has a token in its place.
      expect(r.json.error.message).toBe("this credential's role is not defined in auth.rbac, so it may not use any route (auth.rbac)");
    }
    expect(d.output()).toMatch(/token:[0-9a-f]{8} \(\S+secrets\/tokens:7\) has a role that auth.rbac does not define/);
    expect(d.output()).not.toContain("nosuchrole");
  });

  it("cancelling a backfill takes POST /api/jobs/** (any job), not the rules of a job called backfills", async () => {
    expect((await as(T.onejob, "POST", "/api/backfills/999/cancel", {})).status).toBe(403);
    expect((await as(T.operator, "POST", "/api/backfills/999/cancel", {})).status).toBe(404); // allowed; no such backfill
  });

  it("matches rules on the route the router chose: an encoded slash cannot add a segment", async () => {
    // %2F keeps "hello/run" inside one parameter: the rules see POST /api/jobs/:name (no such
    // route for POST: 404 after auth) and POST /api/jobs/:name/run with name "hello/run" (an
    // invalid job name: 400), never a guessed path with more segments.
    expect((await as(T.viewer, "POST", "/api/jobs/hello%2Frun", {})).status).toBe(403);
    expect((await as(T.operator, "POST", "/api/jobs/hello%2Frun/run", {})).status).toBe(400);
  });

  it("records the token's label (never the token) as triggered_by", async () => {
    const r = await as(T.operator, ...TRIGGER, { reason: "role test" });
    expect(r.status).toBe(202);
    const run = await until("the run", async () => {
      const x = await as(T.viewer, "GET", `/api/runs/${r.json.run_id}`);
      return x.json.status === "SUCCESS" ? x.json : null;
    });
    expect(run.triggered_by).toBe(tokenLabel(T.operator));
    expect(run.triggered_by).toMatch(/^token:[0-9a-f]{8}$/);
    // The Unix socket needs no token: its peers are admin, runs are triggered_by cli.
    const viaSocket = await d.sock<{ run_id: number }>("POST", "/api/jobs/hello/run", {});
    expect(viaSocket.status).toBe(202);
    const sockRun = await d.sock<{ triggered_by: string }>("GET", `/api/runs/${viaSocket.body.run_id}`);
    expect(sockRun.body.triggered_by).toBe("cli");
  });

  it("authenticates the log WebSocket by header or by the bearer.<token> subprotocol", async () => {
    const run = await as(T.admin, ...TRIGGER, {});
    const url = `ws://${d.addr}/ws/logs/${run.json.run_id}`;

    const missing = await wsOpen(url);
    expect(missing.ok).toBe(false);
    if (!missing.ok) {
      expect(missing.status).toBe(401);
      expect(missing.headers["www-authenticate"]).toBe('Bearer realm="svc"');
      expect(JSON.parse(missing.text).error.code).toBe("unauthorized");
    }
    const wrong = await wsOpen(url, { protocols: ["bearer.not-a-token"] });
    expect(wrong.ok ? 101 : wrong.status).toBe(401);
    const wrongHeader = await wsOpen(url, { headers: { authorization: bearer("not-a-token") } });
    expect(wrongHeader.ok ? 101 : wrongHeader.status).toBe(401);

    for (const attempt of [
      await wsOpen(url, { headers: { authorization: bearer(T.viewer) } }),
      await wsOpen(url, { protocols: [`bearer.${T.viewer}`] }),
    ]) {
      expect(attempt.ok).toBe(true);
      if (!attempt.ok) continue;
      expect(await attempt.closed).toBe(1000);
      const frames = attempt.frames();
      expect(frames.some((f) => f.type === "line" && f.line === "hello from svc")).toBe(true);
      expect(frames.at(-1)).toEqual({ type: "end", status: "SUCCESS" });
    }
    // Another offered subprotocol is preferred for the answer, so the token need not travel back.
    const both = await wsOpen(url, { protocols: [`bearer.${T.viewer}`, "svc.logs"] });
    expect(both.ok && both.protocol).toBe("svc.logs");
    if (both.ok) await both.closed;

    // RBAC applies to the upgrade too: the auditor role has no GET /ws/** rule.
    const auditor = await wsOpen(url, { protocols: [`bearer.${T.auditor}`] });
    expect(auditor.ok ? 101 : auditor.status).toBe(403);

    // The subprotocol authenticates a WebSocket handshake only, not a plain request that names it.
    const plain = await call(t, "GET", "/api/status", { headers: { upgrade: "websocket", connection: "close", "sec-websocket-protocol": `bearer.${T.viewer}` } });
    expect(plain.status).toBe(401);
  });

  it("answers malformed Authorization headers with 401 and keeps serving", async () => {
    const cases: [string, string][] = [
      ["Bearer", "malformed credentials: the Authorization header has no token after Bearer"],
      ["Bearer    ", "malformed credentials: the Authorization header has no token after Bearer"],
      [`Bearer ${T.admin} extra`, "malformed credentials: the bearer token contains whitespace"],
      ["Basic !!!not-base64!!!", "malformed credentials: the Basic credentials are not base64"],
      [`Basic ${Buffer.from("u:p").toString("base64")}`, "this daemon takes bearer tokens (auth.type bearer): not Basic credentials"],
      [`Token ${T.admin}`, 'this daemon takes bearer tokens (auth.type bearer): the Authorization header does not start with "Bearer "'],
      // A token sent without the scheme is not echoed back.
      [`${T.admin}`, 'this daemon takes bearer tokens (auth.type bearer): the Authorization header does not start with "Bearer "'],
      ["=", 'malformed credentials: the Authorization header is not "<scheme> <credentials>"'],
      [`Bearer ${"A".repeat(5000)}`, "malformed credentials: the Authorization header is too long"],
    ];
    for (const [header, message] of cases) {
      const r = await call(t, "GET", "/api/status", { headers: { authorization: header } });
      expect(r.status, header.slice(0, 40)).toBe(401);
      expect(r.json.error.code).toBe("unauthorized");
      expect(r.json.error.message).toBe(message);
      expect(r.text).not.toContain(T.admin);
    }
    // Bytes outside ASCII (obs-text) in the header: still a clean 401.
    const raw = await rawRequest(t, `GET /api/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xe9\xe9\r\nConnection: close\r\n\r\n`);
    expect(raw).toMatch(/^HTTP\/1\.1 401 /);
    // A control character is refused by Node's parser (400), before auth.
    const ctl = await rawRequest(t, `GET /api/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\x01b\r\nConnection: close\r\n\r\n`);
    expect(ctl).toMatch(/^HTTP\/1\.1 400 /);
    expect((await as(T.admin, "GET", "/api/status")).status).toBe(200);
  });

  it("refuses oversized headers (431) and keeps serving", async () => {
    const big = await call(t, "GET", "/api/status", { headers: { authorization: bearer(T.admin), "x-padding": "p".repeat(20_000) } }).catch((e: Error) => e);
    if (big instanceof Error) expect(big.message).toMatch(/socket hang up|ECONNRESET/);
    else expect(big.status).toBe(431);
    const many: Record<string, string> = { authorization: bearer(T.admin) };
    for (let i = 0; i < 2_500; i++) many[`x-h${i}`] = "v";
    const manyR = await call(t, "GET", "/api/status", { headers: many }).catch((e: Error) => e);
    if (manyR instanceof Error) expect(manyR.message).toMatch(/socket hang up|ECONNRESET/);
    else expect(manyR.status).toBe(431);
    expect((await as(T.admin, "GET", "/api/status")).status).toBe(200);
  });

  it("re-reads the token file on SIGHUP; a missing or empty file keeps the previous tokens", async () => {
    writeFileSync(tokens(), tokenFile([T.admin, `${T.later} viewer`]));
    d.proc.kill("SIGHUP");
    await until("the new token to work", async () => (await as(T.later, "GET", "/api/status")).status === 200);
    expect((await as(T.viewer, "GET", "/api/status")).status, "a removed token stops working").toBe(401);
    expect((await as(T.later, ...TRIGGER, {})).status, "the new token has its role").toBe(403);

    writeFileSync(tokens(), "# nothing here yet\n\n");
    let mark = d.output().length;
    d.proc.kill("SIGHUP");
    await until("the reload error", () => d.output().slice(mark).includes("contains no token"));
    expect(d.output().slice(mark)).toContain(`reload rejected: auth.bearer.token_file: ${tokens()} contains no token`);
    expect(d.output().slice(mark)).toContain("the previous config stays in effect");
    expect((await as(T.later, "GET", "/api/status")).status, "the previous tokens stay").toBe(200);
    // Asked over the API, the reload says it was rejected (422), as for any config error.
    const answer = await as(T.admin, "POST", "/api/daemon/reload", {});
    expect(answer.status).toBe(422);
    expect(answer.json.error.code).toBe("invalid_config");
    expect(JSON.stringify(answer.json.error.details)).toContain("contains no token");

    rmSync(tokens());
    mark = d.output().length;
    d.proc.kill("SIGHUP");
    await until("the reload error", () => d.output().slice(mark).includes("does not exist"));
    expect(d.output().slice(mark)).toContain(`reload rejected: auth.bearer.token_file: ${tokens()} does not exist`);
    expect((await as(T.admin, "GET", "/api/status")).status).toBe(200);
    expect((await as(null, "GET", "/api/status")).status, "nothing opens up").toBe(401);
    writeFileSync(tokens(), tokenFile(INITIAL));
    d.proc.kill("SIGHUP");
    await until("the first tokens again", async () => (await as(T.viewer, "GET", "/api/status")).status === 200);
  });

  it("never writes a token to the daemon's log", async () => {
    await sleep(200);
    const out = d.output();
    expect(out).toContain('"msg":"http request"');
    for (const token of Object.values(T)) expect(out).not.toContain(token);
    expect(out).not.toMatch(/authorization/i);
  });
});

describe("token file problems at startup", () => {
  let dir: string;
  beforeAll(() => {
    dir = project(YAML);
  });
  afterAll(() => cleanup(dir));

  const withDaemon = (tokenFileLine: string) =>
    writeFileSync(join(dir, "svcd.yaml"), `auth:\n  type: bearer\n  bearer:\n    token_file: ${tokenFileLine}\n`);

  it("refuses to start when the token file is missing, naming it", async () => {
    withDaemon(join(dir, "no-such-tokens"));
    const r = await runDaemonOnce(dir);
    expect(r.code).toBe(1);
    expect(r.output).toContain(`svcd: auth.bearer.token_file: ${join(dir, "no-such-tokens")} does not exist`);
  });

  it("refuses to start when the token file holds no token, or a line it cannot use (without echoing it)", async () => {
    writeFileSync(join(dir, "empty-tokens"), "# only comments\n\n   \n");
    withDaemon(join(dir, "empty-tokens"));
    const empty = await runDaemonOnce(dir);
    expect(empty.code).toBe(1);
    expect(empty.output).toContain(`svcd: auth.bearer.token_file: ${join(dir, "empty-tokens")} contains no token`);

    writeFileSync(join(dir, "bad-tokens"), "good-token-1 viewer\nsecret-part-one secret-part-two viewer\n");
    withDaemon(join(dir, "bad-tokens"));
    const bad = await runDaemonOnce(dir);
    expect(bad.code).toBe(1);
    expect(bad.output).toContain(`${join(dir, "bad-tokens")}:2: expected "<token>" or "<token> <role>", found 3 fields`);
    expect(bad.output).not.toContain("secret-part");
  });

  it("accepts an inline token (admin) with a warning that the file form is preferred", async () => {
    writeFileSync(join(dir, "svcd.yaml"), `auth:\n  type: bearer\n  bearer:\n    token: inline-token-0123456789\n`);
    const d = await startDaemon(dir);
    try {
      const t = target(d.addr);
      expect((await call(t, "GET", "/api/status")).status).toBe(401);
      expect((await call(t, "POST", "/api/config/validate", { headers: { authorization: bearer("inline-token-0123456789") }, body: { content: YAML } })).status).toBe(200);
      expect(d.output()).toContain("inline bearer token: prefer auth.bearer.token_file");
      expect(d.output()).not.toContain("inline-token-0123456789");
    } finally {
      await d.stop();
    }
  });
});

describe("auth.type basic", () => {
  let dir: string;
  let d: DaemonProc;
  let t: Target;
  const PW = { alice: "correct horse battery staple", bob: "bob-viewer-pw-7731" };

  beforeAll(async () => {
    // Cost 8 keeps the test quick; the checks run in the bcrypt worker either way.
    const hash = (pw: string) => bcrypt.hashSync(pw, 8);
    dir = project(YAML, {
      daemon: `auth:
  type: basic
  basic:
    users:
      - username: alice
        password_hash: "${hash(PW.alice)}"
      - username: bob
        password_hash: "${hash(PW.bob)}"
        role: viewer
log:
  level: debug
  format: json
`,
    });
    d = await startDaemon(dir);
    t = target(d.addr);
  });
  afterAll(async () => {
    await d?.stop();
    if (dir) cleanup(dir);
  });

  it("answers 401 with a Basic challenge when credentials are missing, wrong or of the wrong kind", async () => {
    const cases: [Record<string, string>, string][] = [
      [{}, "authentication required: send HTTP Basic credentials"],
      [{ authorization: basic("alice", "wrong") }, "invalid username or password"],
      [{ authorization: basic("mallory", PW.alice) }, "invalid username or password"],
      [{ authorization: basic("alice", "") }, "invalid username or password"],
      [{ authorization: bearer("whatever") }, "this daemon takes HTTP Basic credentials (auth.type basic): not a bearer token"],
      [{ authorization: "Digest username=alice" }, 'this daemon takes HTTP Basic credentials (auth.type basic): the Authorization header does not start with "Basic "'],
      [{ authorization: "Basic bm8tY29sb24=" }, 'malformed credentials: the Basic credentials are not "username:password"'],
      [{ authorization: "Basic %%%" }, "malformed credentials: the Basic credentials are not base64"],
    ];
    for (const [headers, message] of cases) {
      const r = await call(t, "GET", "/api/status", { headers });
      expect(r.status).toBe(401);
      expect(r.headers["www-authenticate"]).toBe('Basic realm="svc", charset="UTF-8"');
      expect(r.json.error).toEqual({ code: "unauthorized", message });
    }
  });

  it("accepts the right password, applies the user's role and records the username as triggered_by", async () => {
    const alice = { authorization: basic("alice", PW.alice) };
    const bob = { authorization: basic("bob", PW.bob) };
    expect((await call(t, "GET", "/api/jobs", { headers: bob })).status).toBe(200);
    expect((await call(t, "POST", "/api/jobs/hello/run", { headers: bob, body: {} })).status).toBe(403);
    const r = await call(t, "POST", "/api/jobs/hello/run", { headers: alice, body: {} });
    expect(r.status).toBe(202);
    const run = await call(t, "GET", `/api/runs/${r.json.run_id}`, { headers: alice });
    expect(run.json.triggered_by).toBe("alice");
  });

  it("authenticates the log WebSocket with Basic credentials", async () => {
    const r = await call(t, "POST", "/api/jobs/hello/run", { headers: { authorization: basic("alice", PW.alice) }, body: {} });
    const url = `ws://${d.addr}/ws/logs/${r.json.run_id}`;
    const missing = await wsOpen(url);
    expect(missing.ok ? 101 : missing.status).toBe(401);
    const wrong = await wsOpen(url, { headers: { authorization: basic("bob", "nope") } });
    expect(wrong.ok ? 101 : wrong.status).toBe(401);
    // The bearer subprotocol means nothing under basic auth.
    const proto = await wsOpen(url, { protocols: ["bearer.anything"] });
    expect(proto.ok ? 101 : proto.status).toBe(401);
    const ok = await wsOpen(url, { headers: { authorization: basic("bob", PW.bob) } });
    expect(ok.ok).toBe(true);
    if (ok.ok) {
      expect(await ok.closed).toBe(1000);
      expect(ok.frames().at(-1)).toMatchObject({ type: "end" });
    }
  });

  it("refuses cross-site requests the browser would send with its cached Basic credentials", async () => {
    const alice = { authorization: basic("alice", PW.alice) };
    const evil = await call(t, "POST", "/api/daemon/stop", { headers: { ...alice, origin: "https://evil.example" } });
    expect(evil.status).toBe(403);
    expect(evil.json.error.code).toBe("forbidden");
    const r = await call(t, "POST", "/api/jobs/hello/run", { headers: { ...alice, origin: `http://${d.addr}` }, body: {} });
    expect(r.status).toBe(202);
    const ws = await wsOpen(`ws://${d.addr}/ws/logs/${r.json.run_id}`, { headers: { ...alice, origin: "https://evil.example" } });
    expect(ws.ok ? 101 : ws.status).toBe(403);
  });

  it("never logs a password or a hash, and the config views show them as ***", async () => {
    const hashes = readFileSync(join(dir, "svcd.yaml"), "utf8").match(/\$2[aby]\$[^"]+/g)!;
    const cfg = await call(t, "GET", "/api/config", { headers: { authorization: basic("alice", PW.alice) } });
    const raw = await call(t, "GET", "/api/config/daemon", { headers: { authorization: basic("bob", PW.bob) } });
    expect(cfg.status).toBe(200);
    expect(raw.status).toBe(200);
    for (const secret of [PW.alice, PW.bob, ...hashes]) {
      expect(d.output()).not.toContain(secret);
      expect(cfg.text).not.toContain(secret);
      expect(raw.text).not.toContain(secret);
    }
  });
});

/** Sends raw bytes (latin1) and returns the raw answer. */
function rawRequest(t: Target, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(t.port, t.host);
    const chunks: Buffer[] = [];
    s.on("data", (c: Buffer) => chunks.push(c));
    s.on("end", () => resolve(Buffer.concat(chunks).toString("latin1")));
    s.on("error", reject);
    s.setTimeout(10_000, () => s.destroy(new Error("raw request timed out")));
    s.end(Buffer.from(text, "latin1"));
  });
}
