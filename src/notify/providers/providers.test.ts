import { describe, expect, it } from "vitest";
import { resolveChannel, type ResolvedChannel } from "../../config/channels.js";
import { integration, job, run } from "../testkit.js";
import { buildDelivery, parseDelivery, PAGER_EVENTS_URL, pagerUrl, type Delivery } from "./index.js";

const integrations = new Map([
  ["pd", integration("pd", { provider: "pager", routingKey: "rk" })],
  ["mail", integration("mail", { provider: "smtp", host: "h", from: "svc@x.org" })],
]);

function resolved(channel: string): ResolvedChannel {
  const r = resolveChannel(channel, integrations);
  if ("error" in r) throw new Error(r.error);
  return r;
}

const input = (channel: string) => ({
  event: "on_failure",
  job: job("backup"),
  run: run(),
  message: "m",
  logs: null,
  channel: resolved(channel),
});

function pagerPayload(d: Delivery): { severity: string; summary: string } {
  if (d.provider !== "pager") throw new Error("not a pager delivery");
  return d.body.payload as { severity: string; summary: string };
}

describe("providers", () => {
  it("pager posts to the public events endpoint unless webhook_url is set", () => {
    expect(PAGER_EVENTS_URL).toBe("https://events.pagerduty.com/v2/enqueue");
    expect(pagerUrl(null)).toBe(PAGER_EVENTS_URL);
    expect(pagerUrl("http://127.0.0.1:9/x")).toBe("http://127.0.0.1:9/x");
  });

  it("pager severities map p1..p4 to critical, error, warning, info", () => {
    const sev = ["p1", "p2", "p3", "p4"].map(
      (p) => pagerPayload(buildDelivery(input(`pd:${p}`))).severity,
    );
    expect(sev).toEqual(["critical", "error", "warning", "info"]);
  });

  it("pager summaries are cut to the events API limit", () => {
    const d = buildDelivery({ ...input("pd:p1"), message: "x".repeat(5000) });
    expect(pagerPayload(d).summary).toHaveLength(1024);
  });

  it("email subject is [svc] <job> <status>; a delivery survives its JSON round trip", () => {
    const d = buildDelivery(input("email:ops@x.org"));
    expect(d).toEqual({ v: 1, provider: "smtp", integration: "mail", to: "ops@x.org", subject: "[svc] backup FAILED", text: "m\n" });
    expect(parseDelivery(JSON.stringify(d))).toEqual(d);
    expect(parseDelivery("null")).toBeNull();
    expect(parseDelivery("{not json")).toBeNull();
  });
});
