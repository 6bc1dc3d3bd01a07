import { describe, expect, it } from "vitest";
import type { IntegrationConfig } from "./types.js";
import { parseChannel, resolveChannel } from "./channels.js";
import { integration } from "../notify/testkit.js";

function map(...list: IntegrationConfig[]): Map<string, IntegrationConfig> {
  return new Map(list.map((i) => [i.name, i]));
}

describe("parseChannel", () => {
  it("splits at the first colon only", () => {
    expect(parseChannel("webhook:http://h:8/p?a=b")).toEqual({ name: "webhook", target: "http://h:8/p?a=b" });
    expect(parseChannel("ops-chat:#data")).toEqual({ name: "ops-chat", target: "#data" });
    expect(parseChannel("myhook:")).toEqual({ name: "myhook", target: "" });
    expect(parseChannel("myhook")).toEqual({ name: "myhook", target: "" });
  });
});

describe("resolveChannel", () => {
  const integrations = map(
    integration("ops-chat", { provider: "chat", webhookUrl: "http://x/hook" }),
    integration("pager", { provider: "pager", routingKey: "rk" }),
    integration("myhook", { provider: "webhook", webhookUrl: "http://x/in" }),
    integration("mailer", { provider: "smtp", host: "mail", from: "svc@x" }),
    integration("team-forum", { provider: "forum", webhookUrl: "http://x/f" }),
  );

  it("looks the name up as an integration name first", () => {
    expect(resolveChannel("ops-chat:#data", integrations)).toEqual({
      channel: "ops-chat:#data",
      provider: "chat",
      integration: "ops-chat",
      target: "#data",
    });
    expect(resolveChannel("ops-chat:@ana", integrations)).toMatchObject({ target: "@ana" });
  });

  it("then as a provider id: the integration named after it, else the only one of that provider", () => {
    expect(resolveChannel("pager:P1", integrations)).toMatchObject({ provider: "pager", integration: "pager", target: "p1" });
    expect(resolveChannel("chat:#x", integrations)).toMatchObject({ provider: "chat", integration: "ops-chat" });
    expect(resolveChannel("forum:#general", integrations)).toMatchObject({ provider: "forum", integration: "team-forum" });
  });

  it("prefers the integration named after the provider over other integrations of it", () => {
    const two = map(
      integration("chat", { provider: "chat", webhookUrl: "http://a" }),
      integration("other-chat", { provider: "chat", webhookUrl: "http://b" }),
    );
    expect(resolveChannel("chat:#x", two)).toMatchObject({ integration: "chat" });
  });

  it("rejects a bare provider with several candidate integrations", () => {
    const two = map(
      integration("a-chat", { provider: "chat", webhookUrl: "http://a" }),
      integration("b-chat", { provider: "chat", webhookUrl: "http://b" }),
    );
    const r = resolveChannel("chat:#x", two);
    expect(r).toEqual({ error: expect.stringContaining("several \"chat\" integrations (a-chat, b-chat)") });
  });

  it("webhook:<url> needs no integration; myhook: posts to the integration's URL", () => {
    expect(resolveChannel("webhook:https://h.example/p?t=1", new Map())).toEqual({
      channel: "webhook:https://h.example/p?t=1",
      provider: "webhook",
      integration: null,
      target: "https://h.example/p?t=1",
    });
    expect(resolveChannel("myhook:", integrations)).toMatchObject({ provider: "webhook", integration: "myhook", target: "" });
    expect(resolveChannel("webhook:", new Map())).toEqual({ error: expect.stringContaining("no integration with provider \"webhook\"") });
    expect(resolveChannel("webhook:ftp://x", new Map())).toEqual({ error: expect.stringContaining("http(s) URL") });
  });

  it("email:<address> uses the smtp integration", () => {
    expect(resolveChannel("email:ops@example.org", integrations)).toEqual({
      channel: "email:ops@example.org",
      provider: "smtp",
      integration: "mailer",
      target: "ops@example.org",
    });
    expect(resolveChannel("mailer:ops@example.org", integrations)).toMatchObject({ provider: "smtp", integration: "mailer" });
    expect(resolveChannel("email:ops@example.org", new Map())).toEqual({
      error: expect.stringContaining("no integration with provider \"smtp\""),
    });
    expect(resolveChannel("email:not-an-address", integrations)).toEqual({ error: expect.stringContaining("email target") });
  });

  it("names unknown integrations and bad targets", () => {
    expect(resolveChannel("nope:#x", integrations)).toEqual({
      error: expect.stringMatching(/unknown integration or provider "nope" \(integrations: mailer, myhook, ops-chat, pager, team-forum/),
    });
    expect(resolveChannel("ops-chat:data", integrations)).toEqual({ error: expect.stringContaining("#channel") });
    expect(resolveChannel("pager:p5", integrations)).toEqual({ error: expect.stringContaining("p1, p2, p3 or p4") });
    expect(resolveChannel(":x", integrations)).toEqual({ error: expect.stringContaining("missing name") });
  });
});
