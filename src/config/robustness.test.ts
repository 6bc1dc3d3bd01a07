/**
 * The loaders never throw: random YAML, truncated configs and random bytes
 * always give a structured result whose issues have positions in range.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import YAML from "yaml";
import { loadDaemonConfig, parseDaemonText } from "./daemon.js";
import { loadProject, parseProjectText } from "./project.js";
import { tempProject } from "./testkit.js";
import type { ConfigIssue, LoadResult } from "./types.js";

const SAMPLE = `defaults:
  timezone: Europe/Berlin
  retries: 2
integrations:
  ops-chat: {provider: chat, webhook_url: "\${env:CHAT_URL}"}
  smtp: {host: mail.local, from: svc@example.org, port: 587}
jobs:
  extract:
    description: pull
    command: ./extract.sh
    frequency: daily
    time: "0230"
    sla: 5m
    timeout: 10m
    tags: [etl]
    output: {rows: "json_field:rows"}
    healthcheck:
      command: test -f out.json
    notify:
      on_failure: "ops-chat:#data"
      on_success:
        - channel: email:ops@example.org
          attach_logs: last_10_lines
  transform:
    command: ["node", "transform.js", "{{ outputs.extract.rows }}"]
    frequency: after:extract
    env:
      TOKEN: \${env:TOKEN}
  report:
    command: |
      echo one
      echo two
    depends_on: [transform]
`;

const DAEMON_SAMPLE = `api:
  addr: 127.0.0.1:8420
  tls: {enabled: false}
auth:
  type: basic
  basic:
    users:
      - {username: ann, password_hash: "$2b$12$${"a".repeat(53)}"}
scheduler: {max_concurrent_jobs: 4}
`;

function checkShape(r: LoadResult<unknown>, text: string): void {
  const lines = text.split("\n").length;
  const issues: ConfigIssue[] = r.ok ? r.warnings : [...r.errors, ...r.warnings];
  if (!r.ok) expect(r.errors.length).toBeGreaterThan(0);
  for (const i of issues) {
    expect(typeof i.message).toBe("string");
    expect(i.message).not.toContain("\n");
    expect(i.message.length).toBeGreaterThan(0);
    expect(i.line).toBeGreaterThanOrEqual(0);
    expect(i.line).toBeLessThanOrEqual(lines + 1);
    expect(i.column).toBeGreaterThanOrEqual(0);
    expect(i.path === "" || i.path.startsWith("/")).toBe(true);
  }
}

const parseBoth = (text: string) => {
  const p = parseProjectText(text, "/nonexistent/svc.yaml", {});
  checkShape(p, text);
  const d = parseDaemonText(text, "/nonexistent/svcd.yaml", {});
  checkShape(d, text);
};

describe("the loaders never throw", () => {
  it("the samples load", () => {
    expect(parseProjectText(SAMPLE, "/nonexistent/svc.yaml", { CHAT_URL: "https://x" }).ok).toBe(true);
    expect(parseDaemonText(DAEMON_SAMPLE, "/nonexistent/svcd.yaml", {}).ok).toBe(true);
  });

  it("property: truncated configs", () => {
    fc.assert(
      fc.property(fc.nat(SAMPLE.length), (n) => {
        parseBoth(SAMPLE.slice(0, n));
        parseBoth(DAEMON_SAMPLE.slice(0, n % (DAEMON_SAMPLE.length + 1)));
      }),
      { numRuns: 150 },
    );
  });

  it("property: configs with random edits", () => {
    fc.assert(
      fc.property(fc.nat(SAMPLE.length), fc.nat(40), fc.string({ maxLength: 6, unit: "binary" }), (at, del, ins) => {
        parseBoth(SAMPLE.slice(0, at) + ins + SAMPLE.slice(at + del));
      }),
      { numRuns: 200 },
    );
  });

  it("property: random YAML documents of any shape", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        parseBoth(YAML.stringify(value));
        parseBoth(YAML.stringify({ jobs: value }));
        parseBoth(YAML.stringify({ jobs: { a: value } }));
        parseBoth(YAML.stringify({ api: value, auth: value }));
      }),
      { numRuns: 100 },
    );
  });

  it("property: random text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200, unit: "binary" }), (text) => parseBoth(text)),
      { numRuns: 200 },
    );
  });

  it("property: random bytes on disk", () => {
    const dir = tempProject();
    let n = 0;
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const file = join(dir, `f${n++}.yaml`);
        writeFileSync(file, bytes);
        for (const r of [loadProject(file, {}), loadDaemonConfig(file, {})]) {
          expect(typeof r.ok).toBe("boolean");
          if (!r.ok) expect(r.errors.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("aliases that expand exponentially are refused, not expanded", () => {
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x]", ...Array.from({ length: 9 }, (_, i) => {
      const p = String.fromCharCode(97 + i);
      const c = String.fromCharCode(98 + i);
      return `${c}: &${c} [*${p}, *${p}, *${p}, *${p}, *${p}, *${p}, *${p}, *${p}, *${p}]`;
    }), "jobs: {}"].join("\n");
    const r = parseProjectText(bomb, "/nonexistent/svc.yaml", {});
    expect(r.ok).toBe(false);
  });
});
