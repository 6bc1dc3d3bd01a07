/**
 * Hostile input against a real svcd: every route of /api/openapi.json
 * (except POST /api/daemon/stop) gets random path parameters, query strings
 * and bodies (random and binary strings, huge numbers, unicode, `../`, NUL,
 * CR/LF, template and SQL fragments). No answer is a 500, every error is in
 * the error shape, no response header carries injected text, nothing hangs,
 * and the daemon serves on. Then raw-socket abuse: CR/LF and NUL in
 * headers, request smuggling shapes, oversized headers and URLs.
 * src/api/badInput.test.ts covers the single cases; this is the fuzzing.
 */
import { connect } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpJson } from "../helpers/daemonKit.js";
import { Owned, pick, report, type DaemonProc } from "./helpers/relKit.js";

const own = new Owned();
let d: DaemonProc;
let host = "";
let port = 0;

beforeAll(async () => {
  d = await own.daemon(
    own.project(`jobs:\n  hello:\n    command: "echo x"\n    output: {x: last_line}\n    tags: [etl]\n    concurrency: allow\n  chain:\n    command: "echo {{ outputs.hello.x }}"\n    depends_on: [hello]\n`),
  );
  host = d.addr.slice(0, d.addr.lastIndexOf(":"));
  port = Number(d.addr.slice(d.addr.lastIndexOf(":") + 1));
}, 60_000);
afterAll(() => own.dispose());

const PER_ROUTE = pick(40, 400);
const SEED = Number(process.env.SVC_FUZZ_SEED ?? Date.now() % 1_000_000);

const NASTY = [
  "",
  " ",
  "..",
  "../",
  "../../etc/passwd",
  "..\\..\\windows",
  "%",
  "%%",
  "%zz",
  "%00",
  "\u0000",
  "a\u0000b",
  "a\r\nX-Injected: yes",
  "\r\n\r\nHTTP/1.1 200 OK",
  "' OR 1=1 --",
  '"; DROP TABLE job_runs; --',
  "${env:HOME}",
  "{{ run.id }}",
  "__proto__",
  "constructor",
  "😀",
  "\uFFFF",
  "\uD800",
  "ÿ",
  "-1",
  "0",
  "1e309",
  "NaN",
  "Infinity",
  "0x10",
  "9007199254740993",
  "9".repeat(400),
  "x".repeat(5_000),
  "[]",
  "{}",
  "null",
  "true",
  "hello",
  "etl",
  "*",
  "?",
  "#",
  "&",
  "=",
];

const text = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40, unit: "binary" }) },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
  { weight: 1, arbitrary: fc.bigInt().map(String) },
);

/** A path segment: percent-encoded random text, or raw text that URL handling must cope with. */
const segment = fc.oneof(
  { weight: 4, arbitrary: text.map((t) => encodeURIComponent(t.replace(/[\uD800-\uDFFF]/g, "x"))) },
  { weight: 1, arbitrary: fc.constantFrom("..", "../..", "%2e%2e", "%2E%2E%2F", "%00", "%ff", "%", "a%2Fb", "%252e", "%c0%ae", ".", "1/../2", "1;x=y") },
);

const jsonValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), text, fc.constant(null), fc.integer(), fc.double(), fc.constant("x".repeat(600)));

interface Op {
  method: string;
  path: string;
  params: { name: string; in: string }[];
  bodyProps: string[];
  hasBody: boolean;
}

function operations(doc: { paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: { content: { "application/json": { schema: { properties?: object } } } } }>> }): Op[] {
  const ops: Op[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (method === "post" && path === "/api/daemon/stop") continue; // would end the test, not the daemon's input handling
      const schema = op.requestBody?.content["application/json"].schema;
      ops.push({ method: method.toUpperCase(), path, params: op.parameters ?? [], bodyProps: Object.keys(schema?.properties ?? {}), hasBody: op.requestBody !== undefined || method === "post" });
    }
  }
  return ops;
}

function requestFor(op: Op): fc.Arbitrary<{ url: string; body: string | undefined; type: string | undefined }> {
  const pathParams = op.params.filter((p) => p.in === "path");
  const queryParams = op.params.filter((p) => p.in === "query").map((p) => p.name);
  const query = fc.array(
    fc.tuple(queryParams.length > 0 ? fc.oneof(fc.constantFrom(...queryParams), fc.constantFrom("x", "__proto__", "a[b]", "")) : fc.constantFrom("x", "q"), text),
    { maxLength: 5 },
  );
  const body = fc.oneof(
    { weight: 3, arbitrary: fc.dictionary(op.bodyProps.length > 0 ? fc.oneof(fc.constantFrom(...op.bodyProps), fc.string({ maxLength: 8 })) : fc.string({ maxLength: 8 }), jsonValue, { maxKeys: 4 }).map((o) => JSON.stringify(o)) },
    { weight: 1, arbitrary: jsonValue.map((v) => JSON.stringify(v) ?? "null") },
    { weight: 1, arbitrary: fc.string({ maxLength: 60, unit: "binary" }) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  return fc.record({
    segs: fc.array(segment, { minLength: pathParams.length, maxLength: pathParams.length }),
    query,
    body: op.hasBody ? body : fc.constant(undefined),
    type: fc.constantFrom("application/json", "application/json", "application/json; charset=utf-8", "text/plain", undefined),
  }).map(({ segs, query: q, body: b, type }) => {
    let url = op.path;
    for (let i = 0; i < pathParams.length; i++) url = url.replace(`{${pathParams[i]!.name}}`, segs[i]!);
    if (q.length > 0) url += `?${q.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v.replace(/[\uD800-\uDFFF]/g, "x"))}`).join("&")}`;
    // save: never a valid file (it would replace svc.yaml); an unknown top-level key is always an error
    if (op.path === "/api/config/save" && b !== undefined) b = b.replace(/"content":"/, '"content":"not_a_key: 1\\n');
    return { url, body: b, type: b === undefined ? undefined : type };
  });
}

/** Raw HTTP over TCP: what a hostile client can put on the wire. Returns the status (0: closed without one) and the head. */
function raw(bytes: Buffer | string, ms = 15_000): Promise<{ status: number; head: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    let data = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${ms} ms to ${String(bytes).slice(0, 80)}`));
    }, ms);
    socket.on("data", (c) => {
      data += c.toString("latin1");
      if (data.includes("\r\n\r\n")) socket.end();
    });
    const done = () => {
      clearTimeout(timer);
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(data)?.[1] ?? 0), head: data.slice(0, data.indexOf("\r\n\r\n") + 1 || data.length) });
    };
    socket.on("close", done);
    socket.on("error", () => {}); // a reset counts as "closed"
    socket.write(bytes);
  });
}

async function alive(): Promise<void> {
  const r = await httpJson<{ status: string }>({ host, port }, "GET", "/api/status");
  expect(r.status).toBe(200);
  expect(d.proc.exitCode).toBeNull();
}

describe("fuzzing every route of the OpenAPI document", () => {
  it(`${PER_ROUTE} random requests per route: no 500, no injected header, no hang (seed ${SEED})`, { timeout: pick(240_000, 1_800_000) }, async () => {
    const doc = await httpJson<Parameters<typeof operations>[0]>({ host, port }, "GET", "/api/openapi.json");
    expect(doc.status).toBe(200);
    const ops = operations(doc.body);
    expect(ops.length).toBeGreaterThan(30);
    const statuses: Record<string, number> = {};
    const failures: string[] = [];
    let sent = 0;
    for (const [i, op] of ops.entries()) {
      const samples = fc.sample(requestFor(op), { numRuns: PER_ROUTE, seed: SEED + i });
      for (let b = 0; b < samples.length; b += 8) {
        await Promise.all(
          samples.slice(b, b + 8).map(async (s) => {
            const what = `${op.method} ${s.url.slice(0, 200)} ${s.body?.slice(0, 100) ?? ""}`;
            sent++;
            const r = await rawRequest(op.method, s.url, s.body, s.type).catch((e: unknown) => ({ status: -1, head: String(e), body: "" }));
            statuses[String(r.status)] = (statuses[String(r.status)] ?? 0) + 1;
            if (r.status >= 500 || r.status <= 0) failures.push(`${r.status} ${what}: ${r.body.slice(0, 200)}`);
            if (/^x-injected/im.test(r.head)) failures.push(`injected header: ${what}`);
            if (r.status >= 400 && s.url.startsWith("/api/") && !/"error":\{"code":"[a-z_]+","message":/.test(r.body)) failures.push(`not the error shape: ${r.status} ${what}: ${r.body.slice(0, 200)}`);
          }),
        );
      }
    }
    // A 500 says "the daemon logged the details": put them in the failure report.
    const logged = failures.some((f) => f.startsWith("500 ")) ? d.output().split("\n").filter((l) => /"level":(50|60)|ERROR|FATAL/.test(l)).slice(-10) : [];
    expect({ failures: failures.slice(0, 20), logged }).toEqual({ failures: [], logged: [] });
    await alive();
    expect(d.output()).not.toMatch(/API request failed/);
    report("API fuzzing", { routes: ops.length, requests: sent, seed: SEED, ...Object.fromEntries(Object.entries(statuses).map(([k, v]) => [`http_${k}`, v])) });
  });
});

/** One request over a fresh socket, any bytes in the URL; resolves with status, head and body. */
function rawRequest(method: string, url: string, body: string | undefined, type: string | undefined): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    const payload = body === undefined ? Buffer.alloc(0) : Buffer.from(body, "utf8");
    const head = [`${method} ${url} HTTP/1.1`, "Host: fuzz", "Connection: close", ...(type ? [`Content-Type: ${type}`] : []), ...(body !== undefined || method === "POST" ? [`Content-Length: ${payload.length}`] : []), "", ""].join("\r\n");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`hang: no answer within 15 s`));
    }, 15_000);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("close", () => {
      clearTimeout(timer);
      const all = Buffer.concat(chunks).toString("utf8");
      const split = all.indexOf("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(all)?.[1] ?? 0), head: all.slice(0, split), body: all.slice(split + 4) });
    });
    socket.on("error", () => {});
    socket.write(Buffer.concat([Buffer.from(head, "latin1"), payload]));
  });
}

describe("header injection, smuggling shapes and oversized requests on the wire", () => {
  const cases: [string, string | Buffer, (status: number) => boolean][] = [
    ["CR/LF inside a header value (split into a new header)", "GET /api/status HTTP/1.1\r\nHost: x\r\nX-A: a\rX-Injected: 1\r\nConnection: close\r\n\r\n", (s) => s === 400],
    ["a bare LF inside a header value", "GET /api/status HTTP/1.1\r\nHost: x\r\nX-A: a\nX-Injected: 1\r\nConnection: close\r\n\r\n", (s) => s === 400 || s === 200],
    ["NUL in a header value", "GET /api/status HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\nConnection: close\r\n\r\n", (s) => s === 400],
    ["NUL in a header name", "GET /api/status HTTP/1.1\r\nHost: x\r\nX\u0000A: b\r\nConnection: close\r\n\r\n", (s) => s === 400],
    ["an obs-fold continuation line", "GET /api/status HTTP/1.1\r\nHost: x\r\nX-A: a\r\n folded\r\nConnection: close\r\n\r\n", (s) => s === 400 || s === 200],
    ["CR/LF encoded in the query (reflected nowhere)", "GET /api/jobs?tag=a%0d%0aX-Injected:%201 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", (s) => s === 400],
    ["NUL in the full-text query of /api/db/run_logs (found by the fuzzer)", "GET /api/db/run_logs?q=a%00b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", (s) => s === 200 || s === 400],
    ["CR/LF encoded in a path parameter", "GET /api/jobs/a%0d%0aX-Injected:%201 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", (s) => s === 400 || s === 404],
    ["two Content-Length headers", "POST /api/jobs/hello/run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{}", (s) => s === 400],
    ["Content-Length with Transfer-Encoding", "POST /api/jobs/hello/run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n", (s) => s === 400],
    ["a bad chunk size", "POST /api/jobs/hello/run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", (s) => s === 400],
    ["a negative Content-Length", "POST /api/jobs/hello/run HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\nConnection: close\r\n\r\n", (s) => s === 400],
    ["a huge Content-Length with no body", "POST /api/jobs/hello/run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999999999999999\r\nConnection: close\r\n\r\n", (s) => s === 400 || s === 413],
    ["an unknown method", "BREW /api/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", (s) => s === 400 || s === 404],
    ["HTTP/1.0 without Host", "GET /api/status HTTP/1.0\r\n\r\n", (s) => s === 200 || s === 400],
    ["an HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", (s) => s === 400 || s === 0 || s === 505],
    ["garbage", Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x00, 0x00, 0x0d, 0x0a, 0x0d, 0x0a]), (s) => s === 400 || s === 0],
    ["a 20 KiB header", `GET /api/status HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20 * 1024)}\r\nConnection: close\r\n\r\n`, (s) => s === 431 || s === 400],
    ["3,000 headers", `GET /api/status HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3_000 }, (_, i) => `X-H${i}: v`).join("\r\n")}\r\nConnection: close\r\n\r\n`, (s) => s === 431 || s === 400 || s === 200],
    ["a 20 KiB URL", `GET /api/jobs/${"a".repeat(20 * 1024)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, (s) => s === 431 || s === 414 || s === 400],
    ["a 1 MiB URL", `GET /api/jobs?tag=${"a".repeat(1024 * 1024)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, (s) => s === 431 || s === 414 || s === 400 || s === 0],
    ["a 1 MiB query of many parameters", `GET /api/audit?${Array.from({ length: 50_000 }, (_, i) => `k${i}=v`).join("&").slice(0, 1024 * 1024)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, (s) => s === 431 || s === 414 || s === 400 || s === 0],
  ];

  it.each(cases)("%s: answered (not 500) and the daemon serves on", async (_what, bytes, ok) => {
    const r = await raw(bytes);
    expect(ok(r.status), `status ${r.status}: ${r.head.slice(0, 300)}`).toBe(true);
    expect(r.head).not.toMatch(/^x-injected/im);
    await alive();
  });

  it("a header that is 10 MB of one line, sent slowly and abandoned, leaves the daemon serving", async () => {
    await new Promise<void>((resolve) => {
      const socket = connect(port, host, () => {
        socket.write("GET /api/status HTTP/1.1\r\nHost: x\r\nX-Big: ");
        let sent = 0;
        const more = () => {
          if (sent >= 10 * 1024 * 1024 || socket.destroyed) {
            socket.destroy();
            resolve();
            return;
          }
          sent += 64 * 1024;
          if (socket.write("b".repeat(64 * 1024))) setImmediate(more);
          else socket.once("drain", more);
        };
        more();
      });
      socket.on("error", () => resolve());
      socket.on("close", () => resolve());
    });
    await alive();
  });
});
