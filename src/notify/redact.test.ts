import { describe, expect, it } from "vitest";
import { describeUrl, integrationSecrets, scrub } from "./redact.js";
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
});
