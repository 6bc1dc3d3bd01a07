/**
 * The error catalogue: every code is documented in docs/API.md with its
 * status, every error the core throws maps to a code, and an unexpected
 * failure is a 500 that is logged with context and leaks nothing.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineError } from "../engine/errors.js";
import { ConflictError, DuplicateSlotError, InvalidQueryError, NotFoundError, StoreOpenError, TransitionError } from "../store/errors.js";
import { ERROR_CATALOGUE, ERROR_CODES } from "./errors.js";
import { mapError } from "./mapError.js";
import { apiKit, type ApiKit } from "./testkit.js";

const API_MD = readFileSync(new URL("../../docs/API.md", import.meta.url), "utf8");

describe("the catalogue", () => {
  it("has the codes and statuses of CONTRACT §4", () => {
    expect(Object.fromEntries(ERROR_CODES.map((c) => [c, ERROR_CATALOGUE[c].status]))).toEqual({
      bad_request: 400,
      unauthorized: 401,
      forbidden: 403,
      not_found: 404,
      conflict: 409,
      payload_too_large: 413,
      validation_failed: 422,
      invalid_config: 422,
      internal: 500,
    });
  });

  it.each(ERROR_CODES)("documents %s in docs/API.md with its status", (code) => {
    expect(API_MD).toContain(`| ${ERROR_CATALOGUE[code].status} | \`${code}\` |`);
  });
});

describe("mapError", () => {
  it.each([
    [new EngineError("not_found", "unknown job"), "not_found"],
    [new EngineError("conflict", "not FAILED"), "conflict"],
    [new EngineError("bad_request", "reason too long"), "bad_request"],
    [new EngineError("validation_failed", "params.day is required", [{ path: "params.day", message: "is required" }]), "validation_failed"],
    [new NotFoundError("alert", 7), "not_found"],
    [new ConflictError("alert 7 is pending"), "conflict"],
    [new DuplicateSlotError("a", "2026-01-01T00:00:00.000Z"), "conflict"],
    [new TransitionError(1, "SUCCESS", "RUNNING"), "conflict"],
    [new InvalidQueryError('cannot sort by "x"'), "bad_request"],
    [Object.assign(new RangeError("Request body is too large"), { code: "FST_ERR_CTP_BODY_TOO_LARGE", statusCode: 413 }), "payload_too_large"],
    [Object.assign(new Error("Unsupported Media Type"), { code: "FST_ERR_CTP_INVALID_MEDIA_TYPE", statusCode: 415 }), "bad_request"],
    [Object.assign(new Error("bad url"), { code: "FST_ERR_BAD_URL", statusCode: 400 }), "bad_request"],
  ] as const)("%s -> %s", (e, code) => {
    expect(mapError(e)?.code).toBe(code);
  });

  it("names the field of a validation error", () => {
    const e = Object.assign(new Error("x"), {
      validation: [{ instancePath: "/page_size", keyword: "enum", params: { allowedValues: [25, 50, 100] }, message: "must be equal to one of the allowed values" }],
      validationContext: "querystring",
    });
    const mapped = mapError(e)!;
    expect(mapped.code).toBe("bad_request");
    expect(mapped.message).toBe('invalid query parameter "page_size": must be one of 25, 50, 100');
    expect(mapped.details).toEqual([{ in: "querystring", field: "page_size", message: "must be one of 25, 50, 100" }]);
  });

  it("leaves anything else unmapped (a 500)", () => {
    expect(mapError(new Error("boom"))).toBeNull();
    expect(mapError(new TypeError("x is undefined"))).toBeNull();
    // A bug such as new Date(NaN).toISOString() is a RangeError: a 500, not the client's fault.
    expect(mapError(new RangeError("Invalid time value"))).toBeNull();
    // An error of ours that is not about the request (status 500) is not answered as is either.
    expect(mapError(new StoreOpenError("/x/svc.db", "cannot open the database /x/svc.db"))).toBeNull();
    expect(mapError("a string")).toBeNull();
  });
});

describe("an unexpected failure", () => {
  let k: ApiKit;
  beforeAll(async () => {
    k = await apiKit("jobs:\n  hello:\n    command: echo hi\n");
  });
  afterAll(async () => {
    await k?.close();
  });

  it("answers 500 internal without the message or a stack, and logs it with the request", async () => {
    const original = k.store.runs.get.bind(k.store.runs);
    k.store.runs.get = () => {
      throw new Error("disk on fire at /secret/path");
    };
    try {
      const r = await k.get("/api/runs/1");
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ error: { code: "internal", message: "internal error: the daemon logged the details" } });
      expect(r.text).not.toContain("disk on fire");
      expect(r.text).not.toContain("at ");
    } finally {
      k.store.runs.get = original;
    }
    const logged = k.log.entries.find((e) => e.level === "error" && e.msg.includes("/api/runs/1"));
    expect(logged?.fields).toMatchObject({ method: "GET", path: "/api/runs/1", route: "/api/runs/:id" });
    expect((logged?.fields.err as Error).message).toBe("disk on fire at /secret/path");
    expect((await k.get("/api/status")).status).toBe(200);
  });

  it("answers a RangeError from a bug (new Date(NaN).toISOString()) 500 internal and logs it", async () => {
    const original = k.store.runs.get.bind(k.store.runs);
    k.store.runs.get = () => {
      new Date(Number.NaN).toISOString();
      throw new Error("unreachable");
    };
    try {
      const r = await k.get("/api/runs/1");
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ error: { code: "internal", message: "internal error: the daemon logged the details" } });
    } finally {
      k.store.runs.get = original;
    }
    const logged = k.log.entries.filter((e) => e.level === "error" && e.msg.includes("/api/runs/1")).at(-1);
    expect(logged?.fields.err).toBeInstanceOf(RangeError);
    expect((logged?.fields.err as Error).message).toBe("Invalid time value");
  });

  it("still answers a bad query value the store refuses (its own error class) 400 with the message", async () => {
    const r = await k.get("/api/db/job_runs?sort=nope");
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("bad_request");
    expect(r.body.error.message).toMatch(/cannot sort by "nope"/);
  });

  it("logs each request at debug level: method, path, status, duration, never headers", async () => {
    await k.request("GET", "/api/status?x=1", { headers: { authorization: "Bearer should-not-be-logged" } });
    const entry = k.log.entries.filter((e) => e.level === "debug" && e.msg === "http request").at(-1)!;
    expect(entry.fields).toEqual({ method: "GET", path: "/api/status", status: 200, ms: expect.any(Number) });
    expect(JSON.stringify(k.log.entries)).not.toContain("should-not-be-logged");
  });
});
