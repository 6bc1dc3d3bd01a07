/**
 * Bad input over real HTTP (and raw TCP where fetch would clean the request
 * up first): each is answered in the error shape or dropped cleanly, and
 * the daemon keeps serving.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_OFFSET, MAX_PAGE } from "../store/types.js";
import { BODY_LIMIT } from "./index.js";
import { apiKit, type ApiKit } from "./testkit.js";

let k: ApiKit;
beforeAll(async () => {
  k = await apiKit("jobs:\n  hello:\n    command: echo hi\n");
});
afterAll(async () => {
  await k?.close();
});

/** Sends raw bytes, returns the status line's code and the body. */
function raw(bytes: Buffer | string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(k.port, "127.0.0.1");
    let data = "";
    socket.on("data", (c) => (data += c.toString("latin1")));
    socket.on("end", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf("\r\n\r\n") + 4) });
    });
    socket.on("error", reject);
    socket.write(bytes);
  });
}

const errorBody = (code: string) => ({ error: expect.objectContaining({ code, message: expect.any(String) }) });

describe("bodies", () => {
  it("malformed JSON is 400", async () => {
    for (const body of ["{bad", '{"reason": }', "[1,", '{"reason":"x"} trailing']) {
      const r = await k.request("POST", "/api/jobs/hello/run", { raw: body, headers: { "content-type": "application/json" } });
      expect(r.status, body).toBe(400);
      expect(r.body).toEqual(errorBody("bad_request"));
      expect(r.body.error.message).toMatch(/JSON/);
    }
  });

  it("a body that is JSON but not an object is 400", async () => {
    for (const body of ["[]", '"text"', "42", "true"]) {
      const r = await k.request("POST", "/api/jobs/hello/run", { raw: body, headers: { "content-type": "application/json" } });
      expect(r.status, body).toBe(400);
    }
  });

  it("prototype poisoning is refused", async () => {
    const r = await k.request("POST", "/api/jobs/hello/run", { raw: '{"__proto__": {"polluted": true}}', headers: { "content-type": "application/json" } });
    expect(r.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("a content type other than JSON is 400; JSON with a charset or no body at all is fine", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml"]) {
      const r = await k.request("POST", "/api/jobs/hello/run", { raw: "reason=x", headers: { "content-type": type } });
      expect(r.status, type).toBe(400);
      expect(r.body).toEqual(errorBody("bad_request"));
      expect(r.body.error.message).toMatch(/Content-Type/);
    }
    const charset = await k.request("POST", "/api/jobs/hello/run", { raw: '{"reason":"x"}', headers: { "content-type": "application/json; charset=utf-8" } });
    expect(charset.status).toBe(202);
    expect((await k.request("POST", "/api/jobs/hello/run")).status).toBe(202);
    const emptyJson = await k.request("POST", "/api/jobs/hello/run", { raw: "", headers: { "content-type": "application/json" } });
    expect(emptyJson.status).toBe(202);
  });

  it("a body over 1 MiB is 413; just under the limit is parsed and validated", async () => {
    const big = JSON.stringify({ reason: "x".repeat(BODY_LIMIT) });
    const r = await k.request("POST", "/api/jobs/hello/run", { raw: big, headers: { "content-type": "application/json" } });
    expect(r.status).toBe(413);
    expect(r.body).toEqual(errorBody("payload_too_large"));
    const under = JSON.stringify({ reason: "x".repeat(BODY_LIMIT - 100) });
    const v = await k.request("POST", "/api/jobs/hello/run", { raw: under, headers: { "content-type": "application/json" } });
    expect(v.status).toBe(400); // reason over 500 characters, not a size problem
    const save = await k.request("POST", "/api/config/save", { raw: JSON.stringify({ content: "#".repeat(BODY_LIMIT + 1) }), headers: { "content-type": "application/json" } });
    expect(save.status).toBe(413);
  });

  it("a client that sends half a body and disconnects leaves the daemon serving", async () => {
    await new Promise<void>((resolve) => {
      const socket = connect(k.port, "127.0.0.1", () => {
        socket.write("POST /api/jobs/hello/run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"rea");
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 50);
      });
    });
    expect((await k.get("/api/status")).status).toBe(200);
  });
});

describe("paths and queries", () => {
  it("unknown routes and methods are 404 in the error shape", async () => {
    for (const [method, path] of [
      ["GET", "/api/nope"],
      ["GET", "/nope"],
      ["POST", "/api/status"],
      ["DELETE", "/api/jobs/hello"],
      ["PUT", "/api/jobs/hello/run"],
      ["GET", "/api/jobs/hello/run"],
    ] as const) {
      const r = await k.request(method, path);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body).toEqual(errorBody("not_found"));
    }
  });

  it("an offset or page past SQLite's integer range is 400 naming the field, on every list route (fuzz seed 255785)", async () => {
    // The fuzzer's case: 500 "the database refused the request" before offset had a maximum.
    const fuzzed = await k.get("/api/backfills?offset=1.0687198466597328e%2B225&__proto__=-2.4298428962948175e%2B217");
    expect(fuzzed.status).toBe(400);
    expect(fuzzed.body.error).toMatchObject({ code: "bad_request", details: [{ in: "querystring", field: "offset", message: `must be <= ${MAX_OFFSET}` }] });
    const doc = (await k.get("/api/openapi.json")).body as { paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>> };
    const lists: [string, string][] = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      const names = (methods.get?.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
      const url = path.replace("{id}", "1").replace("{name}", "hello");
      if (names.includes("offset")) lists.push([url, "offset"]);
      if (names.includes("page")) lists.push([url, "page"]);
    }
    // runs/:id/logs, audit, backfills, db/logs, db/outputs, db/alerts, db/non_runs; db/job_runs, db/job_state
    expect(lists.length).toBeGreaterThanOrEqual(9);
    for (const [url, field] of lists) {
      for (const value of ["1.0687198466597328e%2B225", String(2 ** 63), String(MAX_OFFSET + 1)]) {
        const r = await k.get(`${url}?${field}=${value}`);
        expect(r.status, `${url}?${field}=${value}`).toBe(400);
        expect(r.body.error.code).toBe("bad_request");
        expect(r.body.error.details, url).toEqual([expect.objectContaining({ in: "querystring", field })]);
      }
    }
    expect((await k.get(`/api/backfills?offset=${MAX_OFFSET}`)).body).toMatchObject({ backfills: [], offset: MAX_OFFSET });
    expect((await k.get(`/api/db/job_runs?page=${MAX_PAGE}`)).body).toMatchObject({ rows: [], page: MAX_PAGE });
  });

  it("GET /ws/logs/:id without an upgrade is 404, and its message names the path without the query (a token there)", async () => {
    const r = await k.get("/ws/logs/1?token=SECRET-TOKEN");
    expect(r.status).toBe(404);
    expect(r.body).toEqual(errorBody("not_found"));
    expect(r.body.error.message).toBe("/ws/logs/1 is a WebSocket endpoint: connect with an Upgrade: websocket request");
  });

  it("instants before 1970 are served; past the years 0000-9999 they are 400 naming the field, never 500", async () => {
    const old = await k.get("/api/upcoming?from=1969-12-30T00:00:00Z&days=1");
    expect(old.status).toBe(200);
    for (const url of [
      "/api/upcoming?from=%2B275760-09-12T00:00:00Z",
      "/api/upcoming?from=%2B010000-01-01T00:00:00Z",
      "/api/timeline?to=-271821-04-20T00:00:00Z",
      "/api/timeline?from=%2B010000-01-01T00:00:00Z&to=%2B010000-01-02T00:00:00Z",
      "/api/audit?since=%2B010000-01-01T00:00:00Z",
      "/api/db/job_runs?until=%2B010000-01-01T00:00:00Z",
    ]) {
      const r = await k.get(url);
      expect(r.status, url).toBe(400);
      expect(r.body, url).toEqual(errorBody("bad_request"));
      expect(r.body.error.message, url).toMatch(/between the years 0000 and 9999/);
    }
    // The upcoming window stops at the last instant a four-digit year can write.
    const late = await k.get("/api/upcoming?from=9999-12-30T00:00:00Z&days=7");
    expect(late.status).toBe(200);
    expect(late.body.to).toBe("9999-12-31T23:59:59.999Z");
  });

  it("requests Node's HTTP parser refuses (a URL over 16 KiB, a NUL in the request line) are answered in the error shape", async () => {
    const long = await raw(`GET /api/status?q=${"x".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(long.status).toBe(431);
    expect(JSON.parse(long.body)).toEqual(errorBody("bad_request"));
    const nul = await raw("GET /api/st\u0000atus HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(nul.status).toBe(400);
    expect(JSON.parse(nul.body)).toEqual(errorBody("bad_request"));
    expect((await k.get("/api/status")).status).toBe(200);
  });

  it("a backup path with a NUL character is 400, never 500", async () => {
    const r = await k.post("/api/db/backup", { path: "/tmp/a\u0000b" });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(errorBody("bad_request"));
  });

  it("path traversal in job names never reaches a lookup", async () => {
    for (const path of ["/api/jobs/..%2F..%2Fetc%2Fpasswd", "/api/jobs/hello%2F..%2F..", "/api/jobs/..%5Chello/run"]) {
      const r = await k.request(path.endsWith("/run") ? "POST" : "GET", path);
      expect(r.status, path).toBe(400);
      expect(r.body.error.message).toContain('"name"');
    }
    // unencoded, as a raw client can send it
    const dots = await raw("GET /api/jobs/../../etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(dots.status).toBe(404);
    expect(JSON.parse(dots.body)).toEqual(errorBody("not_found"));
    const run = await raw("POST /api/jobs/../run HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    expect(run.status).toBe(400);
  });

  it("invalid UTF-8 or bad percent-encoding is 400", async () => {
    for (const path of ["/api/jobs/%FF", "/api/jobs/%E0%A4%A", "/api/runs/%C3%28/logs"]) {
      const r = await k.get(path);
      expect(r.status, path).toBe(400);
      expect(r.body).toEqual(errorBody("bad_request"));
    }
    for (const query of ["tag=%FF%FE", "tag=%C3%28", "status=%FF"]) {
      const r = await k.get(`/api/jobs?${query}`.replace("jobs?status", "audit?status"));
      expect(r.status, query).toBe(400);
      expect(r.body).toEqual(errorBody("bad_request"));
    }
    // raw non-UTF-8 bytes on the wire
    const bytes = Buffer.concat([Buffer.from("GET /api/jobs/"), Buffer.from([0xff, 0xfe]), Buffer.from(" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")]);
    const r = await raw(bytes);
    expect([400, 404]).toContain(r.status);
  });

  it("repeated or empty values where one is expected are 400", async () => {
    expect((await k.get("/api/audit?status=failed&status=success")).status).toBe(400);
    expect((await k.get("/api/audit?job=")).status).toBe(400);
    expect((await k.get("/api/db/job_runs?page=")).status).toBe(400);
  });

  it("the daemon still answers after all of it", async () => {
    const r = await k.get("/api/status");
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("ok");
  });
});
