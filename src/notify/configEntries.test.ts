/**
 * From svc.yaml text to delivered notifications: the config loader's
 * shorthand and object entry forms, lists of entries, `${env:}` in
 * integration fields, then real deliveries to a local receiver.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseProjectText } from "../config/index.js";
import type { ProjectConfig } from "../config/types.js";
import { harness, startReceiver, type Harness, type Receiver } from "./testkit.js";

let rx: Receiver;
let h: Harness | null = null;
beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(() => rx.close());
afterEach(async () => {
  await h?.close();
  h = null;
  rx.received.length = 0;
});

function load(yaml: string, env: NodeJS.ProcessEnv): ProjectConfig {
  const r = parseProjectText(yaml, "/tmp/svc-notify-config/svc.yaml", env);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

describe("notify entries from svc.yaml", () => {
  it("shorthand, object and list forms all deliver; ${env:} URLs resolve at load", async () => {
    const project = load(
      `
integrations:
  ops-chat: {provider: chat, webhook_url: "\${env:CHAT_URL}"}
  oncall: {provider: pager, routing_key: "\${env:PD_KEY}", webhook_url: "\${env:PD_URL}"}
jobs:
  backup:
    command: "false"
    description: nightly backup
    tags: [db]
    notify:
      on_failure:
        - ops-chat:#data
        - channel: "oncall:p2"
          message: "{{ job.name }} ({{ job.tags }}) failed: exit {{ run.exit_code }}"
      on_success:
        channel: "ops-chat:#data"
        message: "{{ job.name }} recovered"
        only_after_failure: true
      on_retry: "webhook:${rx.url}/retry"
`,
      { CHAT_URL: `${rx.url}/chat`, PD_KEY: "pd-key-1", PD_URL: `${rx.url}/pd` },
    );
    h = await harness({ project });
    expect(h.store.integrations.all().map((r) => [r.name, r.credential_status])).toEqual([
      ["oncall", "configured"],
      ["ops-chat", "configured"],
    ]);

    await h.emit("on_failure", h.newRun("backup", { status: "FAILED", exit_code: 1, attempt: 1 }));
    const byPath = Object.fromEntries(rx.received.map((r) => [r.path, r.body]));
    expect(Object.keys(byPath).sort()).toEqual(["/chat", "/pd"]);
    expect(byPath["/chat"]).toStrictEqual({ channel: "#data", text: expect.stringMatching(/^svc: job backup FAILED \(run \d+, attempt 1, exit 1\)$/) });
    expect(byPath["/pd"]).toMatchObject({
      routing_key: "pd-key-1",
      payload: { summary: "backup (db) failed: exit 1", severity: "error", source: "svc" },
    });

    rx.received.length = 0;
    await h.emit("on_success", h.newRun("backup", { status: "SUCCESS", exit_code: 0 }), { previousStatus: "SUCCESS" });
    expect(rx.received).toHaveLength(0);
    await h.emit("on_success", h.newRun("backup", { status: "SUCCESS", exit_code: 0 }), { previousStatus: "FAILED" });
    expect(rx.received.map((r) => r.body)).toEqual([{ channel: "#data", text: "backup recovered" }]);

    rx.received.length = 0;
    await h.emit("on_retry", h.newRun("backup", { status: "RETRYING" }));
    expect(rx.received.map((r) => [r.path, (r.body as { event: string }).event])).toEqual([["/retry", "on_retry"]]);
  });

  it("an integration whose ${env:} variable is unset is synced as such and its alerts fail naming the variable", async () => {
    const project = load(
      `
integrations:
  ops-chat: {provider: chat, webhook_url: "\${env:CHAT_URL_UNSET}"}
jobs:
  backup:
    command: "false"
    notify: {on_failure: "ops-chat:#data"}
`,
      {},
    );
    h = await harness({ project });
    expect(h.store.integrations.get("ops-chat")).toMatchObject({ credential_status: "env var unset" });
    await h.emit("on_failure", h.newRun("backup"));
    expect(rx.received).toHaveLength(0);
    expect(h.alerts()).toMatchObject([
      { status: "failed", error: 'integration "ops-chat" (chat): env var unset: CHAT_URL_UNSET; nothing is sent until it is set (and svcd reloaded)' },
    ]);
  });
});
