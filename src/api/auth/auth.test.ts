import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { afterAll, describe, expect, it } from "vitest";
import { memoryLogger } from "../../shared/logger.js";
import { DEFAULT_RBAC, parseDaemonText } from "../../config/daemon.js";
import { Authenticator, type AuthConfig } from "./authenticator.js";
import { BasicVerifier } from "./basic.js";
import { BcryptWorker } from "./bcryptWorker.js";
import { parseAuthorization, presentedCredentials } from "./credentials.js";
import { FailureLimiter } from "./failureLimiter.js";
import { compileRbac, compileRule, roleAllows, splitPath } from "./rbac.js";
import { parseTokenFile } from "./tokenFile.js";

const rbac = compileRbac({ ...DEFAULT_RBAC, custom: ["GET /api/audit", "* /api/db/*/rows", "POST /api/jobs/*/run"], broken: ["nonsense", "GET /a/**/b"] });
const may = (role: string, method: string, path: string) => roleAllows(rbac, role, method, splitPath(path));

describe("rbac", () => {
  it("applies the built-in roles (CONTRACT §5)", () => {
    expect(may("viewer", "GET", "/api/jobs")).toBe(true);
    expect(may("viewer", "HEAD", "/api/jobs")).toBe(true);
    expect(may("viewer", "GET", "/")).toBe(true);
    expect(may("viewer", "POST", "/api/jobs/x/run")).toBe(false);
    expect(may("operator", "POST", "/api/jobs/x/run")).toBe(true);
    expect(may("operator", "POST", "/api/jobs/pause")).toBe(true);
    expect(may("operator", "POST", "/api/db/alerts/7/retry")).toBe(true);
    expect(may("operator", "POST", "/api/db/alerts/7/retry/again")).toBe(false);
    expect(may("operator", "POST", "/api/integrations/chat/test")).toBe(true);
    expect(may("operator", "POST", "/api/daemon/stop")).toBe(false);
    expect(may("operator", "POST", "/api/config/save")).toBe(false);
    expect(may("admin", "DELETE", "/anything/at/all")).toBe(true);
  });

  it("matches * as one non-empty segment, a final ** as any rest, method * as any", () => {
    expect(may("custom", "GET", "/api/audit")).toBe(true);
    expect(may("custom", "GET", "/api/audit/")).toBe(false);
    expect(may("custom", "POST", "/api/audit")).toBe(false);
    expect(may("custom", "PUT", "/api/db/alerts/rows")).toBe(true);
    expect(may("custom", "GET", "/api/db//rows")).toBe(false);
    expect(may("custom", "POST", "/api/jobs/a/run")).toBe(true);
    expect(may("custom", "POST", "/api/jobs/a/b/run")).toBe(false);
    expect(roleAllows(compileRbac({ r: ["GET /api/**"] }), "r", "GET", splitPath("/api"))).toBe(true);
  });

  it("skips unusable rules with a warning, and an unknown role may do nothing", () => {
    expect(rbac.warnings).toEqual([
      'auth.rbac.broken[0]: "nonsense" is not "METHOD /path/pattern" (e.g. "GET /api/**"); the rule is ignored',
      'auth.rbac.broken[1]: "GET /a/**/b" uses ** before the end (** matches the rest of a path only); the rule is ignored',
    ]);
    expect(may("broken", "GET", "/a/x/b")).toBe(false);
    expect(may("nosuchrole", "GET", "/api/status")).toBe(false);
    expect(compileRule("get /x")).toEqual({ method: "GET", segments: ["x"], rest: false });
  });

  it("svcd.yaml refuses, with its place, every rule that would be skipped; every rule it takes compiles", () => {
    const rules = ["GET /**", "* /**", "POST /api/jobs/*/run", "GET /a/**", "GET /a/b**/c", "GET /a/**/b", "GET /**/x", "* /a/*/**/**", "GET /", "FETCH /x", "GET x", "GET  /x"];
    for (const [i, rule] of rules.entries()) {
      const loaded = parseDaemonText(`auth:\n  rbac:\n    r:\n      - ${JSON.stringify(rule)}\n`, "/etc/svc/svcd.yaml", {});
      const compiled = compileRule(rule);
      expect(loaded.ok, `${rule}: ${JSON.stringify(loaded)}`).toBe(typeof compiled !== "string" && /^(?:\*|GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) \//.test(rule));
      if (!loaded.ok) expect(loaded.errors[0], `rule ${i}`).toMatchObject({ line: 4, path: "/auth/rbac/r/0", message: expect.stringMatching(/METHOD \/path\/pattern" with \*\* only as the last segment/) });
    }
  });
});

describe("token file", () => {
  it("reads tokens with optional roles, skipping blank lines and comments", () => {
    expect(parseTokenFile("# ops\n\nabc123\n  def456   viewer  \r\n#x y z\n", "/t")).toEqual({
      ok: true,
      tokens: [
        { token: "abc123", role: "admin", line: 3 },
        { token: "def456", role: "viewer", line: 4 },
      ],
      warnings: [],
    });
  });

  it("takes a base64 token (with / and =) and warns, without quoting it, that the dashboard cannot follow logs with it", () => {
    const r = parseTokenFile("q1w2e3/t5y6+u7i8o9== viewer\nplain-token\n", "/t");
    expect(r).toEqual({
      ok: true,
      tokens: [
        { token: "q1w2e3/t5y6+u7i8o9==", role: "viewer", line: 1 },
        { token: "plain-token", role: "admin", line: 2 },
      ],
      warnings: [
        'auth.bearer.token_file: /t:1: the token has "/" or "=", which a WebSocket subprotocol cannot carry: the dashboard cannot follow logs with it (the API takes it); a token of letters, digits and -._~ can (openssl rand -hex 32)',
      ],
    });
  });

  it("refuses an empty file and bad lines without quoting the token", () => {
    expect(parseTokenFile("# nothing\n\n", "/t")).toEqual({ ok: false, error: "auth.bearer.token_file: /t contains no token (one token per line, optionally followed by a role)" });
    const three = parseTokenFile("ok\nsecret1 secret2 viewer\n", "/t");
    expect(three).toEqual({ ok: false, error: 'auth.bearer.token_file: /t:2: expected "<token>" or "<token> <role>", found 3 fields' });
    const bad = parseTokenFile('se"cret\n', "/t");
    expect(bad.ok).toBe(false);
    expect(JSON.stringify(bad)).not.toContain("se\\\"cret");
  });
  it("a line written the wrong way round (role first) never quotes the token, in the error or the role warning", async () => {
    const b64 = "3q2+7wAbCdEf0123==";
    const reversed = parseTokenFile(`ci ${b64}\n`, "/t");
    expect(reversed).toEqual({ ok: false, error: 'auth.bearer.token_file: /t:1: the second field is not a role name (a line is "<token>" or "<token> <role>", the token first)' });
    const hex = "3f9a".repeat(16);
    const dir = mkdtempSync(join(tmpdir(), "svc-tok-"));
    try {
      const file = join(dir, "tokens");
      writeFileSync(file, `# ops\nviewer ${hex}\n`, { mode: 0o600 });
      const log = memoryLogger();
      const auth = new Authenticator(log);
      expect(auth.configure({ type: "bearer", bearer: { tokenFile: file, token: null }, basic: { users: [] }, oidc: null, rbac: { ...DEFAULT_RBAC } as Record<string, string[]> })).toEqual({ ok: true });
      const warnings = log.entries.filter((e) => e.level === "warn").map((e) => e.msg);
      expect(warnings).toEqual([expect.stringMatching(new RegExp(`^token:[0-9a-f]{8} \\(${file}:2\\) has a role that auth.rbac does not define: it gets 403 on every route \\(a line is "<token> <role>", the token first\\)$`))]);
      expect(JSON.stringify(log.entries)).not.toContain(hex);
      await auth.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("credentials", () => {
  it("parses Bearer and Basic, case-insensitively, and says what is malformed", () => {
    expect(parseAuthorization("Bearer abc")).toEqual({ kind: "bearer", token: "abc" });
    expect(parseAuthorization("bEaReR   abc  ")).toEqual({ kind: "bearer", token: "abc" });
    expect(parseAuthorization(`Basic ${Buffer.from("u:p:q").toString("base64")}`)).toEqual({ kind: "basic", username: "u", password: "p:q" });
    expect(parseAuthorization(`Basic ${Buffer.from("ü:ß").toString("base64")}`)).toEqual({ kind: "basic", username: "ü", password: "ß" });
    expect(parseAuthorization("Bearer").kind).toBe("malformed");
    expect(parseAuthorization("Bearer a b").kind).toBe("malformed");
    expect(parseAuthorization("Basic ***").kind).toBe("malformed");
    expect(parseAuthorization("Digest x=1")).toEqual({ kind: "other" });
    expect(parseAuthorization("").kind).toBe("malformed");
  });

  it("takes the bearer.<token> subprotocol only on a WebSocket upgrade without a header", () => {
    const headers = { "sec-websocket-protocol": "svc.logs, bearer.tok123" };
    expect(presentedCredentials(headers, true)).toEqual({ kind: "bearer", token: "tok123" });
    expect(presentedCredentials(headers, false)).toEqual({ kind: "none" });
    expect(presentedCredentials({ ...headers, authorization: "Bearer other" }, true)).toEqual({ kind: "bearer", token: "other" });
    expect(presentedCredentials({ "sec-websocket-protocol": "bearer." }, true).kind).toBe("malformed");
  });
});

describe("FailureLimiter", () => {
  it("refuses an address after maxFailures (running checks included) until its window is over", () => {
    const l = new FailureLimiter({ maxFailures: 3, windowMs: 1_000, maxEntries: 10 });
    l.begin("a", 0);
    l.begin("a", 0);
    expect(l.blockedFor("a", 0)).toBe(0);
    l.begin("a", 0);
    expect(l.blockedFor("a", 10), "three checks running fill the budget").toBe(1_000);
    expect(l.end("a", true, 20)).toBe(false);
    expect(l.end("a", false, 20)).toBe(false);
    expect(l.blockedFor("a", 20)).toBe(0);
    expect(l.end("a", true, 30)).toBe(false);
    l.begin("a", 40);
    expect(l.end("a", true, 40), "the third failure reaches the limit").toBe(true);
    expect(l.blockedFor("a", 500)).toBe(1_000);
    expect(l.blockedFor("b", 500)).toBe(0);
    expect(l.blockedFor("a", 1_001)).toBe(0);
  });

  it("remembers at most maxEntries addresses", () => {
    const l = new FailureLimiter({ maxFailures: 1, windowMs: 60_000, maxEntries: 3 });
    for (const k of ["a", "b", "c", "d"]) {
      l.begin(k, 0);
      l.end(k, true, 0);
    }
    expect(l.blockedFor("a", 1)).toBe(0);
    expect(l.blockedFor("d", 1)).toBeGreaterThan(0);
  });
});

describe("BasicVerifier", () => {
  const worker = new BcryptWorker();
  afterAll(() => worker.close());
  const hash = bcrypt.hashSync("right", 4);
  const users = [
    { username: "alice", passwordHash: hash, role: "admin" },
    { username: "bob", passwordHash: bcrypt.hashSync("bobpw", 4), role: "viewer" },
  ];

  it("checks in the worker, remembers a success, and never lets a wrong password or unknown user in", async () => {
    const v = new BasicVerifier(worker, new FailureLimiter({ maxFailures: 100, windowMs: 60_000, maxEntries: 10 }));
    v.setUsers(users);
    expect(await v.verify("alice", "right", "c")).toEqual({ ok: true, user: users[0] });
    expect(await v.verify("alice", "wrong", "c")).toMatchObject({ ok: false, why: "wrong" });
    expect(await v.verify("mallory", "right", "c")).toMatchObject({ ok: false, why: "wrong" });
    expect(await v.verify("bob", "right", "c")).toMatchObject({ ok: false, why: "wrong" });
    // Cached: answered without the worker (nothing in flight).
    const cached = v.verify("alice", "right", "c");
    expect(worker.inFlight).toBe(0);
    expect(await cached).toMatchObject({ ok: true });
    // A reload that changes the password forgets the cached success.
    v.setUsers([{ ...users[0]!, passwordHash: bcrypt.hashSync("new", 4) }]);
    expect(await v.verify("alice", "right", "c")).toMatchObject({ ok: false, why: "wrong" });
  });

  it("shares one check among identical requests, and throttles an address after its failures", async () => {
    const v = new BasicVerifier(worker, new FailureLimiter({ maxFailures: 2, windowMs: 60_000, maxEntries: 10 }));
    v.setUsers(users);
    const same = await Promise.all(Array.from({ length: 5 }, () => v.verify("bob", "bobpw", "c")));
    expect(same.every((r) => r.ok)).toBe(true);
    const guesses = await Promise.all(Array.from({ length: 6 }, (_, i) => v.verify("alice", `guess${i}`, "attacker")));
    expect(guesses.filter((r) => !r.ok && r.why === "wrong")).toHaveLength(2);
    expect(guesses.filter((r) => !r.ok && r.why === "throttled")).toHaveLength(4);
    expect(await v.verify("alice", "right", "attacker"), "refused even with the right password").toMatchObject({ ok: false, why: "throttled" });
    expect(await v.verify("alice", "right", "elsewhere")).toMatchObject({ ok: true });
    expect(await v.verify("alice", "right", "attacker"), "even when it is remembered (no guessing against the cache)").toMatchObject({ ok: false, why: "throttled" });
  });

  it("a check under way when the users are replaced (a reload) answers for the new password, not the old", async () => {
    const v = new BasicVerifier(worker, new FailureLimiter({ maxFailures: 100, windowMs: 60_000, maxEntries: 10 }));
    v.setUsers(users);
    const first = v.verify("alice", "right", "c"); // checked against the old hash
    const shared = v.verify("alice", "right", "c"); // shares that check
    v.setUsers([{ ...users[0]!, passwordHash: bcrypt.hashSync("new", 4) }]);
    const later = v.verify("alice", "right", "c"); // started after the reload
    expect(await Promise.all([first, shared, later])).toEqual([
      expect.objectContaining({ ok: false, why: "wrong" }),
      expect.objectContaining({ ok: false, why: "wrong" }),
      expect.objectContaining({ ok: false, why: "wrong" }),
    ]);
    expect(await v.verify("alice", "new", "c")).toMatchObject({ ok: true });
  });

  it("an unknown user is checked against a dummy hash as dear as the dearest user's, not the first one's", () => {
    const v = new BasicVerifier(worker, new FailureLimiter({ maxFailures: 100, windowMs: 60_000, maxEntries: 10 }));
    const dummyOf = () => (v as unknown as { dummy: string }).dummy.slice(0, 7);
    v.setUsers([...users, { username: "carol", passwordHash: bcrypt.hashSync("c", 6), role: "viewer" }]);
    expect(dummyOf()).toBe("$2b$06$");
    v.setUsers([users[0]!, { username: "dave", passwordHash: "$2b$12$" + "a".repeat(53), role: "viewer" }]);
    expect(dummyOf()).toBe("$2b$12$");
  });
});

describe("Authenticator", () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-auth-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cfg = (over: Partial<AuthConfig>): AuthConfig => ({
    type: "bearer",
    bearer: { tokenFile: null, token: null },
    basic: { users: [] },
    oidc: null,
    rbac: { ...DEFAULT_RBAC } as Record<string, string[]>,
    ...over,
  });

  it("keeps the previous tokens when the new token file cannot be used", async () => {
    const file = join(dir, "tokens");
    writeFileSync(file, "first-token viewer\n", { mode: 0o600 });
    const log = memoryLogger();
    const auth = new Authenticator(log);
    expect(auth.configure(cfg({ bearer: { tokenFile: file, token: null } }))).toEqual({ ok: true });
    const req = (token: string) => ({ headers: { authorization: `Bearer ${token}` }, isUpgrade: false, client: "c" });
    expect(await auth.authenticate(req("first-token"))).toMatchObject({ ok: true, principal: { role: "viewer", transport: "tcp" } });
    writeFileSync(file, "\n");
    expect(auth.configure(cfg({ bearer: { tokenFile: file, token: null } }))).toEqual({ ok: false, error: `auth.bearer.token_file: ${file} contains no token (one token per line, optionally followed by a role)` });
    expect(await auth.authenticate(req("first-token"))).toMatchObject({ ok: true });
    expect(auth.configure(cfg({ bearer: { tokenFile: null, token: "inline-one" } }))).toEqual({ ok: true });
    expect(await auth.authenticate(req("first-token"))).toMatchObject({ ok: false, message: "invalid bearer token" });
    expect(await auth.authenticate(req("inline-one"))).toMatchObject({ ok: true, principal: { role: "admin" } });
    expect(JSON.stringify(log.entries)).not.toContain("first-token");
    await auth.close();
  });
});
