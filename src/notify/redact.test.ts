import { describe, expect, it } from "vitest";
import { describeUrl, integrationSecrets, scrub, scrubValue } from "./redact.js";
import { integration } from "./testkit.js";

describe("redaction", () => {
  it("names an endpoint by its origin only", () => {
    expect(describeUrl("https://hooks.example/services/T0/B0/XYZ?token=1")).toBe("https://hooks.example");
    expect(describeUrl("not a url")).toBe("(invalid URL)");
  });

  it("scrubs secrets and cuts URLs to their origin", () => {
    const secrets = integrationSecrets(
      integration("x", { provider: "pager", routingKey: "RKEY-123", password: "pw-secret", webhookUrl: "http://h/p/TOKEN" }),
    );
    expect(scrub("key RKEY-123 pass pw-secret url http://h/p/TOKEN and https://a.b/c?d=e end", secrets)).toBe(
      "key *** pass *** url *** and https://a.b end",
    );
  });

  it("cuts a URL's user and password with its path", () => {
    expect(scrub("refused http://user:s3cret-tok@127.0.0.1:9/hook and https://tok@a.b/c", [])).toBe("refused http://127.0.0.1:9 and https://a.b");
  });

  it("scrubs every string and key of a parsed answer", () => {
    expect(scrubValue({ ok: false, "RKEY-123": ["RKEY-123 x", 3, null, { deep: "see http://h/p/TOKEN" }] }, ["RKEY-123", "http://h/p/TOKEN"])).toEqual({
      ok: false,
      "***": ["*** x", 3, null, { deep: "see ***" }],
    });
  });
});
