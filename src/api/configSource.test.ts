/**
 * The config texts over real HTTP (CONTRACT §7.5): GET /api/config/source
 * and /api/config/daemon redacted for every role, `?raw=1` only for a role
 * allowed POST /api/config/save (logged with the principal, never the text),
 * a file that cannot be parsed answered with its errors and no text, and a
 * save that would write the `"***"` placeholder over a secret refused.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigWorker } from "./configWorker.js";
import { apiKit, roleKit, type ApiKit, type Json, type RoleKit } from "./testkit.js";

const SVC = `integrations:
  chat: {provider: chat, webhook_url: "https://hooks.example/T0/s3cret-hook"}
jobs:
  extract:
    command: echo hi
    env:
      # OLD_PASSWORD: s3cret-commented-out
      DB_PASSWORD:
        s3cret-db-password
      NOTE: |
        s3cret-block-one
        s3cret-block-two
    description: plain text stays
`;

const DAEMON = `auth:
  type: bearer
  bearer:
    token_file: tokens
    token: "s3cret-inline-token"
  rbac:
    editor: ["GET /**", "POST /api/config/save"]
executor:
  global_env: {API_KEY: s3cret-global}
`;

const FIXTURES = join(import.meta.dirname, "../../test/fixtures/configWorker");

const TOKENS = { admin: "tok-admin-1", viewer: "tok-viewer-2", operator: "tok-operator-3", editor: "tok-editor-4" };

let k: RoleKit<keyof typeof TOKENS>;

beforeAll(async () => {
  k = await roleKit(SVC, DAEMON, TOKENS);
});
afterAll(async () => {
  await k?.close();
});

/** The daemon log's lines about raw reads. */
const rawReads = () => k.log.entries.filter((e) => e.msg.includes("?raw=1"));

describe("GET /api/config/source and /api/config/daemon", () => {
  it("answer every role the text line for line with the secrets ***", async () => {
    for (const role of ["viewer", "operator", "editor", "admin"] as const) {
      const src = await k.as(role, "GET", "/api/config/source");
      expect(src.status, role).toBe(200);
      expect(src.body.content.split("\n")).toHaveLength(SVC.split("\n").length);
      expect(src.body.content).toContain("description: plain text stays");
      expect(src.text).not.toContain("s3cret");
      const daemon = await k.as(role, "GET", "/api/config/daemon");
      expect(daemon.status, role).toBe(200);
      expect(daemon.body.content.split("\n")).toHaveLength(DAEMON.split("\n").length);
      expect(daemon.body.content).toContain("token_file: tokens");
      expect(daemon.text).not.toContain("s3cret");
    }
  });

  it("?raw=1: 403 for roles that may not save the config, the text as on disk for those that may", async () => {
    for (const role of ["viewer", "operator"] as const) {
      for (const path of ["/api/config/source?raw=1", "/api/config/daemon?raw=true"]) {
        const r = await k.as(role, "GET", path);
        expect(r.status, `${role} ${path}`).toBe(403);
        expect(r.body.error.code).toBe("forbidden");
        expect(r.body.error.message).toContain("POST /api/config/save");
        expect(r.text).not.toContain("s3cret");
      }
    }
    expect(rawReads()).toEqual([]);
    for (const role of ["editor", "admin"] as const) {
      expect((await k.as(role, "GET", "/api/config/source?raw=1")).body).toEqual({ path: k.configPath, content: SVC });
      expect((await k.as(role, "GET", "/api/config/daemon?raw=1")).body).toEqual({ path: k.daemonPath, content: DAEMON });
    }
    expect((await k.as("admin", "GET", "/api/config/source?raw=0")).text).not.toContain("s3cret");
    expect((await k.as("admin", "GET", "/api/config/source?raw=yes")).status).toBe(400);
  });

  it("logs each raw read with the principal and the file, never the text", async () => {
    k.log.entries.length = 0;
    await k.as("editor", "GET", "/api/config/source?raw=1");
    await k.as("admin", "GET", "/api/config/daemon?raw=1");
    const reads = rawReads();
    expect(reads).toHaveLength(2);
    expect(reads[0]!.level).toBe("info");
    expect(reads[0]!.fields).toMatchObject({ file: k.configPath, principal: expect.stringMatching(/^token:[0-9a-f]{8} \(role editor\)$/) });
    expect(reads[1]!.fields).toMatchObject({ file: k.daemonPath, principal: expect.stringContaining("(role admin)") });
    expect(JSON.stringify(k.log.entries)).not.toContain("s3cret");
  });

  it("a file that cannot be parsed: 422 invalid_config with each YAML error's file, line and column, and no text", async () => {
    const broken = `${SVC}  bad: "s3cret-unclosed\n    more: [\n`;
    writeFileSync(k.configPath, broken);
    try {
      const r = await k.as("viewer", "GET", "/api/config/source");
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe("invalid_config");
      expect(r.body.error.message).toContain("cannot be parsed");
      expect(r.body.error.details.length).toBeGreaterThan(0);
      for (const d of r.body.error.details) {
        expect(d).toMatchObject({ file: k.configPath, line: expect.any(Number), column: expect.any(Number), path: "" });
        expect(d.line).toBeGreaterThanOrEqual(SVC.split("\n").length);
      }
      expect(r.text).not.toContain("s3cret");
      // Whoever may save it can still load it, to fix it.
      expect((await k.as("admin", "GET", "/api/config/source?raw=1")).body.content).toBe(broken);
    } finally {
      writeFileSync(k.configPath, SVC);
    }
  });
});

describe("POST /api/config/save and the *** placeholder", () => {
  it("refuses a text that holds *** where the file has a secret, naming each place; the file stays", async () => {
    const redacted = (await k.as("admin", "GET", "/api/config/source")).body.content as string;
    const edited = redacted.replace("plain text stays", "edited from the redacted view");
    const r = await k.as("admin", "POST", "/api/config/save", { file: "svc.yaml", content: edited });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("invalid_config");
    expect(r.body.error.message).toContain('"***"');
    expect(r.body.error.details.map((d: Json) => d.path).sort()).toEqual([
      "/integrations/chat/webhook_url",
      "/jobs/extract/env/DB_PASSWORD",
      "/jobs/extract/env/NOTE",
      "/jobs/extract/env/OLD_PASSWORD",
    ]);
    expect(r.body.error.details.find((d: Json) => d.path.endsWith("OLD_PASSWORD")).message).toContain("commented-out");
    expect(r.body.error.details[0]).toMatchObject({ file: k.configPath, line: expect.any(Number), column: expect.any(Number) });
    expect(readFileSync(k.configPath, "utf8")).toBe(SVC);

    const daemon = (await k.as("admin", "GET", "/api/config/daemon")).body.content as string;
    const d = await k.as("admin", "POST", "/api/config/save", { file: "svcd.yaml", content: daemon });
    expect(d.status).toBe(422);
    expect(d.body.error.details.map((x: Json) => x.path).sort()).toEqual(["/auth/bearer/token", "/executor/global_env/API_KEY"]);
    expect(readFileSync(k.daemonPath!, "utf8")).toBe(DAEMON);
  });

  it("saves the raw text edited, and a new value that reads *** where there was none", async () => {
    const raw = (await k.as("editor", "GET", "/api/config/source?raw=1")).body.content as string;
    const edited = raw.replace("plain text stays", "edited from the raw text").replace("    description:", '      NEW_ONE: "***"\n    description:');
    const r = await k.as("editor", "POST", "/api/config/save", { file: "svc.yaml", content: edited });
    expect(r.status, r.text).toBe(200);
    expect(readFileSync(k.configPath, "utf8")).toBe(edited);
    expect(readFileSync(k.configPath, "utf8")).toContain("s3cret-db-password");
    writeFileSync(k.configPath, SVC);
    expect((await k.deps.reload()).ok).toBe(true);
  });
});

describe("when the config worker's thread cannot run", () => {
  /** GET `path` answers 500 internal without a secret and logs one error naming the request: the error it logged. */
  async function failsOnce(kit: ApiKit, path: string): Promise<Error | undefined> {
    kit.log.entries.length = 0;
    const r = await kit.get<Json>(path);
    expect(r.status, path).toBe(500);
    expect(r.body.error.code).toBe("internal");
    expect(r.text).not.toContain("s3cret");
    const logged = kit.log.entries.filter((e) => e.level === "error");
    expect(logged).toHaveLength(1);
    expect(logged[0]!.msg).toContain(`API request failed: GET ${path}`);
    return (logged[0]!.fields as { err?: Error }).err;
  }

  it("answers 500 internal with the error logged (the text is never parsed on the event loop), and tries a new thread on the next request", async () => {
    const worker = new ConfigWorker({ entry: pathToFileURL(join(import.meta.dirname, "no-such-config-thread.mjs")).href });
    const kit = await apiKit(SVC, { daemon: DAEMON.replace(/^ {2}type: bearer$/m, "  type: none"), configWorker: worker });
    try {
      for (const path of ["/api/config/source", "/api/config/daemon"]) {
        const err = await failsOnce(kit, path);
        expect(String(err?.message)).toMatch(/config worker stopped \(.*no-such-config-thread\.mjs/);
      }
      const v = await kit.request<Json>("POST", "/api/config/validate", { body: { file: "svc.yaml", content: SVC } });
      expect(v.status).toBe(500);
      const s = await kit.request<Json>("POST", "/api/config/save", { body: { file: "svc.yaml", content: SVC.replace("plain text stays", "changed") } });
      expect(s.status).toBe(500);
      expect(readFileSync(kit.configPath, "utf8")).toBe(SVC);
      expect(worker.starts).toBe(4);
    } finally {
      await kit.close();
      await worker.close();
    }
  });

  it("a job that throws answers 500 internal and logs it once, and neither the answer nor the log holds the text (a parser's message can quote it)", async () => {
    const worker = new ConfigWorker({ entry: pathToFileURL(join(FIXTURES, "quotes.ts")).href });
    const kit = await apiKit(SVC, { daemon: DAEMON.replace(/^ {2}type: bearer$/m, "  type: none"), configWorker: worker });
    try {
      for (const path of ["/api/config/source", "/api/config/daemon"]) {
        const err = (await failsOnce(kit, path))!;
        expect(err.message).toMatch(/the config worker failed on redact of a svcd?\.yaml text \([\d,]+ characters\): QuotingError/);
        expect(`${JSON.stringify(kit.log.entries)} ${err.message} ${err.stack}`).not.toContain("s3cret");
      }
    } finally {
      await kit.close();
    }
  });
});

describe("when the API closes (svcd stops) during a config view", () => {
  it("the view answers 409 conflict (shutting down) at once, the thread is ended, and nothing is logged as an error", async () => {
    const worker = new ConfigWorker({ entry: pathToFileURL(join(FIXTURES, "dies.mjs")).href });
    // The fixture thread never answers a text holding "# hang": only the close can end the request.
    const kit = await apiKit(`${SVC}# hang\n`, { configWorker: worker });
    const view = fetch(`${kit.base}/api/config/source`).then(async (r) => ({ status: r.status, text: await r.text() }));
    await kit.waitFor("the view to reach the thread", () => worker.running && worker.inFlight === 1);
    await kit.close();
    const r = await view;
    expect(r.status).toBe(409);
    expect(JSON.parse(r.text).error).toMatchObject({ code: "conflict", message: expect.stringContaining("shutting down") });
    expect(r.text).not.toContain("s3cret");
    expect(worker.running).toBe(false);
    expect(worker.inFlight).toBe(0);
    expect(kit.log.entries.filter((e) => e.level === "error")).toEqual([]);
  });
});
