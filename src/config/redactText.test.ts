import fc from "fast-check";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { parseProjectText } from "./project.js";
import { SECRET_RULES, secretMatcher, type ConfigKind } from "./redactRules.js";
import { redactConfigText, secretValues } from "./redactText.js";

/** The redacted text; fails the test when the text did not parse. */
function redact(kind: ConfigKind, text: string): string {
  const r = redactConfigText(kind, text);
  if (!r.ok) throw new Error(`did not parse: ${JSON.stringify(r.errors)}`);
  return r.text;
}

/** Redacts, then checks the invariants every answer keeps: same lines, still YAML, no secret left. */
function check(kind: ConfigKind, text: string, secrets: string[]): string {
  const out = redact(kind, text);
  expect(out.split("\n"), "line count").toHaveLength(text.split("\n").length);
  for (const s of secrets) expect(out, `secret ${JSON.stringify(s)} in:\n${out}`).not.toContain(s);
  const reparsed = YAML.parseAllDocuments(out, { merge: true });
  expect(reparsed.flatMap((d) => d.errors), `re-parse of:\n${out}`).toEqual([]);
  return out;
}

const lines = (s: string) => s.split("\n");

describe("redactConfigText: the example of issue 18", () => {
  it("hides a token on the line after its key, a global_env value on the next line and a job env value", () => {
    const daemon = "auth:\n  type: bearer\n  bearer:\n    token:\n      s3cretTokenValue\nexecutor:\n  global_env:\n    API_KEY:\n      hunter2\n";
    const out = check("svcd.yaml", daemon, ["s3cretTokenValue", "hunter2"]);
    expect(lines(out)).toEqual(["auth:", "  type: bearer", "  bearer:", "    token:", '      "***"', "executor:", "  global_env:", "    API_KEY:", '      "***"', ""]);
    const svc = 'jobs:\n  a:\n    command: echo hi\n    env: {DB_PASSWORD: "plain-job-secret-123"}\n';
    expect(check("svc.yaml", svc, ["plain-job-secret-123"])).toBe('jobs:\n  a:\n    command: echo hi\n    env: {DB_PASSWORD: "***"}\n');
  });
});

describe("redactConfigText: every YAML form of a value", () => {
  const env = (value: string) => `jobs:\n  a:\n    command: echo\n    env:\n      K: ${value}\n    description: after\n`;
  it.each([
    ["plain", "s3cret-plain", "s3cret-plain"],
    ["double-quoted", '"s3cret \\"dq\\""', "s3cret"],
    ["single-quoted", "'s3cret ''sq'''", "s3cret"],
    ["multi-line plain", "s3cret-one\n        s3cret-two", "s3cret"],
    ["multi-line double-quoted", '"s3cret-one\n        s3cret-two"', "s3cret"],
    ["multi-line single-quoted", "'s3cret-one\n\n        s3cret-two'", "s3cret"],
    ["block literal", "|\n        s3cret-one\n        s3cret-two", "s3cret"],
    ["block literal, keep, indicator", "|2+\n         s3cret-one\n\n", "s3cret"],
    ["folded", ">-\n        s3cret-one\n        s3cret-two", "s3cret"],
    ["tagged", "!!str s3cret-tagged", "s3cret"],
    ["a number", "123456789", "123456789"],
  ])("%s", (_name, value, secret) => {
    const text = env(value);
    const out = check("svc.yaml", text, [secret]);
    const parsed = YAML.parse(out) as { jobs: { a: { env: { K: string }; description: string } } };
    expect(parsed.jobs.a.env.K).toBe("***");
    expect(parsed.jobs.a.description).toBe("after");
    // Lines after the value keep their number: the description is where it was.
    expect(lines(out).indexOf("    description: after")).toBe(lines(text).indexOf("    description: after"));
  });

  it("keeps the column of what follows a multi-line value on its last line", () => {
    const text = 'integrations:\n  chat: {webhook_url: "https://s3cret-one\n    s3cret-two", provider: chat}\n';
    const out = check("svc.yaml", text, ["s3cret"]);
    expect(lines(out)[1]).toBe('  chat: {webhook_url: "***"');
    expect(lines(out)[2]).toMatch(/^ +, provider: chat}$/);
    expect(lines(out)[2]!.indexOf(", provider")).toBe(lines(text)[2]!.indexOf(", provider"));
    expect(YAML.parse(out).integrations.chat).toEqual({ webhook_url: "***", provider: "chat" });
  });

  it("flow maps and sequences, nested, and keys written quoted", () => {
    const text = [
      "auth: {type: bearer, bearer: {'token': \"s3cret-flow\"}, basic: {users: [{username: ann, \"password_hash\": s3cret-hash}]}}",
      "executor: {global_env: {A: [s3cret-in-seq, {deep: s3cret-deep}]}, shell: /bin/sh}",
      "",
    ].join("\n");
    const out = check("svcd.yaml", text, ["s3cret"]);
    expect(YAML.parse(out)).toEqual({
      auth: { type: "bearer", bearer: { token: "***" }, basic: { users: [{ username: "ann", password_hash: "***" }] } },
      executor: { global_env: { A: ["***", { deep: "***" }] }, shell: "/bin/sh" },
    });
  });

  it("CRLF line breaks stay CRLF", () => {
    const text = "auth:\r\n  bearer:\r\n    token: |\r\n      s3cret-one\r\n      s3cret-two\r\n  type: bearer\r\n";
    const out = check("svcd.yaml", text, ["s3cret"]);
    expect(out).toBe('auth:\r\n  bearer:\r\n    token: "***"\r\n\r\n\r\n  type: bearer\r\n');
  });

  it("an empty or null secret has nothing to hide and stays as written", () => {
    const text = "auth:\n  bearer:\n    token:\n  type: bearer\nexecutor:\n  global_env: {A: null, B: ''}\n";
    expect(check("svcd.yaml", text, [])).toBe('auth:\n  bearer:\n    token:\n  type: bearer\nexecutor:\n  global_env: {A: "***", B: "***"}\n');
  });

  it("every document of a multi-document file", () => {
    const out = check("svcd.yaml", "auth: {bearer: {token: s3cret-a}}\n---\nauth: {bearer: {token: s3cret-b}}\n", ["s3cret"]);
    expect(YAML.parseAllDocuments(out).map((d) => d.toJS())).toEqual([{ auth: { bearer: { token: "***" } } }, { auth: { bearer: { token: "***" } } }]);
  });
});

describe("redactConfigText: anchors, aliases and merge keys", () => {
  it("an anchored secret and its alias at another secret path", () => {
    const text = "jobs:\n  a:\n    command: echo\n    env: {K: &k s3cret-k}\n  b:\n    command: echo\n    env: {K: *k}\n";
    const out = check("svc.yaml", text, ["s3cret"]);
    expect(out).toContain('env: {K: &k "***"}');
    expect(out).toContain('env: {K: "***"}');
  });

  it("a value anchored at a plain path is hidden when an alias of it reaches a secret path", () => {
    const text = "jobs:\n  a:\n    command: echo\n    description: &pw s3cret-described\n    env: {PW: *pw}\n";
    const out = check("svc.yaml", text, ["s3cret"]);
    expect(YAML.parse(out).jobs.a).toEqual({ command: "echo", description: "***", env: { PW: "***" } });
  });

  it("an aliased map: the anchor's values are secret when the alias sits at a secret path", () => {
    const text = "common: &common {A: s3cret-a, B: s3cret-b}\njobs:\n  a:\n    command: echo\n    env: *common\n";
    const out = check("svc.yaml", text, ["s3cret"]);
    expect(YAML.parse(out).common).toEqual({ A: "***", B: "***" });
    expect(out).toContain("env: *common");
  });

  it("merge keys: an alias, a list of aliases, an inline map, and overrides", () => {
    const text = [
      "base: &base {command: echo, env: {A: s3cret-a}}",
      "more: &more {env: {B: s3cret-b}, description: plain-more}",
      "jobs:",
      "  a:",
      "    <<: *base",
      "  b:",
      "    <<: [*more, *base]",
      "  c:",
      "    <<: {command: echo, env: {C: s3cret-c}}",
      "auth_like: {<<: {password: s3cret-pw}}",
      "",
    ].join("\n");
    const out = check("svc.yaml", text, ["s3cret-a", "s3cret-b", "s3cret-c"]);
    const parsed = YAML.parse(out, { merge: true });
    expect(parsed.jobs.a.env).toEqual({ A: "***" });
    expect(parsed.jobs.b).toEqual({ env: { B: "***" }, description: "plain-more", command: "echo" });
    expect(parsed.jobs.c.env).toEqual({ C: "***" });
    // `password` is a secret name in svcd.yaml only: svc.yaml keeps it.
    expect(parsed.auth_like).toEqual({ password: "s3cret-pw" });
    const daemon = check("svcd.yaml", "defaults: &d {password: s3cret-pw}\nextra: {<<: *d}\n", ["s3cret"]);
    expect(YAML.parse(daemon, { merge: true })).toEqual({ defaults: { password: "***" }, extra: { password: "***" } });
  });

  it("refuses an alias bomb instead of expanding it", () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 6; i++) levels.push(`${"abcdefg"[i]}: &${"abcdefg"[i]} [${Array(10).fill(`*${"abcdefg"[i - 1]}`).join(", ")}]`);
    levels.push("executor: {global_env: {A: *f}}");
    const r = redactConfigText("svcd.yaml", `${levels.join("\n")}\n`);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]!.message).toMatch(/alias/);
  });
});

describe("redactConfigText: comments", () => {
  it("keeps comments beside a value and a block scalar's header comment", () => {
    const text = "auth:\n  bearer:\n    token: s3cret # rotated monthly\n    token_file: /etc/t # the file\nexecutor:\n  global_env:\n    A: |  # a note\n      s3cret-block\n";
    const out = check("svcd.yaml", text, ["s3cret"]);
    expect(lines(out)[2]).toBe('    token: "***" # rotated monthly');
    expect(lines(out)[3]).toBe("    token_file: /etc/t # the file");
    expect(lines(out)[6]).toBe('    A: "***"  # a note');
  });

  it("hides commented-out secrets: by their place (any indentation style), by their name, and beside a secret", () => {
    const text = [
      "auth:",
      "  bearer:",
      "    # token: old-s3cret-1",
      "#   token: old-s3cret-2",
      "    token_file: /etc/t",
      "  basic:",
      "    users:",
      "      - username: ann",
      "        # password_hash: old-s3cret-3",
      "      # - {username: bob, password_hash: old-s3cret-4}",
      "# token: old-s3cret-5",
      "executor:",
      "  global_env:",
      "    # OLD_KEY: old-s3cret-6",
      "    A: s3cret # was: old-s3cret-7",
      "  #  B: old-s3cret-8",
      "    # C: 'old-s3cret-9' and more text that is not YAML: at all",
      "  shell: /bin/sh # shell: stays",
      "# a note: stays",
      "",
    ].join("\n");
    const out = check("svcd.yaml", text, ["s3cret"]);
    expect(lines(out)[2]).toBe('    # token: "***"');
    expect(lines(out)[9]).toBe('      # - {username: bob, password_hash: "***"}');
    expect(lines(out)[14]).toBe('    A: "***" # was: "***"');
    expect(lines(out)[17]).toBe("  shell: /bin/sh # shell: stays");
    expect(lines(out)[18]).toBe("# a note: stays");
  });

  it("commented-out env entries of svc.yaml; a note after an env block stays", () => {
    const text = "jobs:\n  a:\n    command: echo\n    env:\n      A: s3cret-a\n      # B: old-s3cret-b\n  # b: a plain note\n";
    const out = check("svc.yaml", text, ["s3cret"]);
    expect(lines(out)[5]).toBe('      # B: "***"');
    expect(lines(out)[6]).toBe("  # b: a plain note");
  });

  it("a block commented out by an editor (`# ` at the block's indentation) is read as one YAML text", () => {
    const text = [
      "jobs:",
      "  a:",
      "    command: echo",
      "    # env:",
      "    #   OLD: old-s3cret-1",
      "    #   MULTI: |",
      "    #     old-s3cret-2",
      "    #     old-s3cret-3",
      "    description: plain",
      "",
    ].join("\n");
    const out = check("svc.yaml", text, ["s3cret"]);
    expect(lines(out).slice(3, 9)).toEqual(["    # env:", '    #   OLD: "***"', '    #   MULTI: "***"', "    #", "    #", "    description: plain"]);
  });

  it("a comment inside an anchored map is read at every place an alias or merge brings it to", () => {
    const text = "common: &common\n  # FIRST: old-s3cret-0\n  KEY: s3cret-k # was: old-s3cret-1\n  # OLD: old-s3cret-2\n  note: plain\njobs:\n  a:\n    command: echo\n    env: {<<: *common}\n";
    const out = check("svc.yaml", text, ["s3cret"]);
    expect(lines(out).slice(1, 4)).toEqual(['  # FIRST: "***"', '  KEY: "***" # was: "***"', '  # OLD: "***"']);
    // Reached at more than 64 places, every value of such a comment is hidden.
    const many = ["base: &b", "  # note: plain-but-hidden", "  K: v", "jobs:"];
    for (let i = 0; i < 70; i++) many.push(`  j${i}: {command: echo, env: *b}`);
    expect(check("svc.yaml", `${many.join("\n")}\n`, [])).toContain('  # note: "***"');
  });

  it("a comment holding ${env:} in svcd.yaml", () => {
    const out = check("svcd.yaml", "api:\n  # addr: ${env:OLD_ADDR}\n  addr: 127.0.0.1:0\n", ["${env:"]);
    expect(lines(out)[1]).toBe('  # addr: "***"');
  });
});

describe("redactConfigText: the rules of each file", () => {
  it("svcd.yaml: token, password hashes, any password and client_secret, global_env values, ${env:} values", () => {
    const text = [
      "api: {addr: '${env:SVC_ADDR}', base_path: /svc}",
      "auth:",
      "  type: bearer",
      "  bearer: {token: s3cret-token, token_file: /etc/tokens}",
      "  basic: {users: [{username: ann, password_hash: s3cret-hash, role: viewer}]}",
      "  oidc: {client_id: plain-id, client_secret: s3cret-oidc}",
      "somewhere: {deep: {password: s3cret-pw}}",
      "executor: {global_env: {K: s3cret-genv}, shell: /bin/sh}",
      "log: {file: {path: /var/log/svcd.log}}",
      "",
    ].join("\n");
    const out = check("svcd.yaml", text, ["s3cret", "${env:"]);
    expect(YAML.parse(out)).toEqual({
      api: { addr: "***", base_path: "/svc" },
      auth: {
        type: "bearer",
        bearer: { token: "***", token_file: "/etc/tokens" },
        basic: { users: [{ username: "ann", password_hash: "***", role: "viewer" }] },
        oidc: { client_id: "plain-id", client_secret: "***" },
      },
      somewhere: { deep: { password: "***" } },
      executor: { global_env: { K: "***" }, shell: "/bin/sh" },
      log: { file: { path: "/var/log/svcd.log" } },
    });
  });

  it("svc.yaml: job and default env values, integration credentials, secret param defaults only", () => {
    const text = [
      "defaults:",
      "  env: {D: s3cret-d}",
      "  params: {p: {secret: true, default: s3cret-dp}, q: {default: plain-q}}",
      "integrations:",
      "  chat: {provider: chat, webhook_url: 'https://hooks/s3cret-url'}",
      "  pager: {provider: pager, routing_key: s3cret-rk}",
      "  smtp: {provider: smtp, host: mail.local, from: a@b.c, port: 587, username: s3cret-user, password: s3cret-pass}",
      "jobs:",
      "  a:",
      "    command: echo ${env:HOME}",
      "    description: plain-description",
      "    env: {E: s3cret-e}",
      "    params:",
      "      p: {type: string, secret: true, default: s3cret-p}",
      "      q: {type: string, secret: false, default: plain-q2}",
      "      r: {type: string, default: plain-r}",
      "",
    ].join("\n");
    const out = check("svc.yaml", text, ["s3cret"]);
    const parsed = YAML.parse(out);
    expect(parsed.defaults).toEqual({ env: { D: "***" }, params: { p: { secret: true, default: "***" }, q: { default: "plain-q" } } });
    expect(parsed.integrations).toEqual({
      chat: { provider: "chat", webhook_url: "***" },
      pager: { provider: "pager", routing_key: "***" },
      smtp: { provider: "smtp", host: "mail.local", from: "a@b.c", port: 587, username: "***", password: "***" },
    });
    // `${env:}` in a command is not resolved in svc.yaml: it is shown as written.
    expect(parsed.jobs.a.command).toBe("echo ${env:HOME}");
    expect(parsed.jobs.a.description).toBe("plain-description");
    expect(parsed.jobs.a.params).toEqual({
      p: { type: "string", secret: true, default: "***" },
      q: { type: "string", secret: false, default: "plain-q2" },
      r: { type: "string", default: "plain-r" },
    });
  });

  it("each rule of the table hides something in a file built from the rule alone", () => {
    for (const kind of ["svc.yaml", "svcd.yaml"] as const) {
      for (const rule of SECRET_RULES[kind].paths) {
        const segs = rule.path.split(".").map((s) => (s === "*" || s === "**" ? "x" : s));
        const leaf: Record<string, unknown> = { [segs[segs.length - 1]!]: "s3cret-rule" };
        if (rule.whenSibling) leaf[rule.whenSibling] = true;
        const data = segs.slice(0, -1).reduceRight<unknown>((inner, key) => ({ [key]: inner }), leaf);
        const text = YAML.stringify(data);
        expect(check(kind, text, ["s3cret-rule"]), `${kind} ${rule.path}`).toContain("***");
      }
    }
  });

  it("the matcher: ** matches any depth, a subtree under a secret path is secret, a sibling condition is read", () => {
    const m = secretMatcher("svcd.yaml");
    const none = () => null;
    expect(m.isSecret(["password"], none)).toBe(true);
    expect(m.isSecret(["a", "b", "c", "password"], none)).toBe(true);
    expect(m.isSecret(["auth", "bearer", "token", "0"], none)).toBe(true);
    expect(m.isSecret(["auth", "bearer", "token_file"], none)).toBe(false);
    expect(m.isSecret(["auth", "basic", "users", "3", "username"], none)).toBe(false);
    const svc = secretMatcher("svc.yaml");
    expect(svc.isSecret(["jobs", "a", "params", "p", "default"], (depth, key) => depth === 4 && key === "secret" && false)).toBe(false);
    expect(svc.isSecret(["jobs", "a", "params", "p", "default"], (depth, key) => depth === 4 && key === "secret")).toBe(true);
    expect(svc.isSecret(["jobs", "a", "params", "p", "default"], none)).toBe(true);
    expect([...m.secretNames].sort()).toEqual(["client_secret", "password", "password_hash", "token"]);
  });
});

describe("redactConfigText: text it cannot parse", () => {
  it("answers the YAML errors with line and column, and never the text", () => {
    const text = "auth:\n  bearer:\n    token: \"s3cret-unclosed\n  type: [bearer\n";
    const r = redactConfigText("svcd.yaml", text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.length).toBeGreaterThan(0);
    for (const e of r.errors) {
      expect(e.line).toBeGreaterThan(0);
      expect(e.column).toBeGreaterThan(0);
      expect(e.message).toMatch(/^YAML: /);
    }
    expect(JSON.stringify(r)).not.toContain("s3cret");
  });

  it("refuses a key that is a map or spans lines, as the loader does: what such a key holds would be shown as written", () => {
    for (const text of [
      "jobs:\n  ? a:\n      env:\n        TOKEN: zq-s3cret\n  : x\n",
      "jobs:\n  ? \"a\n    TOKEN: zq-s3cret\"\n  : x\n",
    ]) {
      const r = redactConfigText("svc.yaml", text);
      expect(r.ok, text).toBe(false);
      expect(JSON.stringify(r)).not.toContain("zq-s3cret");
      if (!r.ok) expect(r.errors[0]!.message).toMatch(/^YAML: a key (is a map or a list|spans more than one line)/);
    }
  });

  it("never quotes a value in an error, whatever breaks the text around it (the yaml package quotes the token it stumbled on)", () => {
    // The forms that made the yaml package quote a secret, and a typo above an env block.
    const broken = [
      (s: string) => `version: 1\njobs:\n  a:\n    command: [backup, --all]]\n    env:\n      DB_PASSWORD: ${s}\n`,
      (s: string) => `version: 1\njobs:\n  a:\n    command: x\n    env:\n      DB_PASSWORD: |${s}\n        x\n`,
      (s: string) => `version: 1\njobs:\n  a:\n    command: x\n    env:\n      DB_PASSWORD: >-${s}\n`,
      (s: string) => `version: 1\njobs:\n  a:\n    command: x\n    env:\n      DB_PASSWORD: "ab\\q${s}"\n`,
      (s: string) => `version: 1\njobs:\n  a:\n    command: x\n    env:\n      DB_PASSWORD: !${s} x\n`,
      (s: string) => `version: 1\njobs:\n  a:\n    command: x\n    env:\n      DB_PASSWORD: \`${s}\n`,
      (s: string) => `version: 1\njobs:\n  a:\n    command: x\n    env: {DB_PASSWORD: ${s}}}\n`,
      (s: string) => `auth:\n  type: bearer\n  bearer:\n    token: @${s}\n`,
      (s: string) => `%${s} x\n---\nauth:\n  type: none\n`,
      // A map as a key (stringified whole by the yaml package), and a key a stray quote swallowed.
      (s: string) => `jobs:\n?  a:\n    command: x\n    env:\n      TOKEN: ${s}\n`,
      (s: string) => `jobs:\n?\t"  a:\n    command: x\n    env:\n      TOKEN: ${s}\n      OTHER: "${s}"\n`,
    ];
    const secret = fc.stringMatching(/^zq[a-z0-9]{6,12}$/);
    // Any of those, or a valid file broken by punctuation inserted anywhere.
    const text = fc.oneof(
      fc.tuple(fc.constantFrom(...broken), secret).map(([f, s]) => ({ s, t: f(s) })),
      fc
        .tuple(secret, fc.nat(), fc.string({ unit: fc.constantFrom(..."[]{}|>!&*%@`'\",:-? \n\t#"), minLength: 1, maxLength: 4 }))
        .map(([s, at, junk]) => {
          const t = `version: 1\njobs:\n  a:\n    command: x\n    env:\n      TOKEN: ${s}\n      OTHER: "${s}"\n`;
          const i = at % t.length;
          return { s, t: t.slice(0, i) + junk + t.slice(i) };
        }),
    );
    fc.assert(
      fc.property(text, ({ s, t }) => {
        for (const kind of ["svc.yaml", "svcd.yaml"] as const) {
          const r = redactConfigText(kind, t);
          if (!r.ok) expect(JSON.stringify(r.errors), t).not.toContain(s);
        }
        const loaded = parseProjectText(t, "/nowhere/svc.yaml", {});
        if (!loaded.ok) expect(JSON.stringify(loaded), t).not.toContain(s);
      }),
      { numRuns: 600 },
    );
  });
});

describe("secretValues", () => {
  it("lists commented-out secrets too, at the place they were commented out", () => {
    const r = secretValues("svc.yaml", "jobs:\n  a:\n    command: echo\n    env:\n      # OLD: s3cret-old\n      K: v\n");
    expect(r.ok && r.values).toEqual([
      { pointer: "/jobs/a/env/K", value: "v", line: 6, column: 10 },
      { pointer: "/jobs/a/env/OLD", value: "s3cret-old", line: 5, column: 14, inComment: true },
    ]);
  });

  it("lists each secret scalar with its JSON pointer, value and position", () => {
    const r = secretValues("svc.yaml", 'jobs:\n  a/b:\n    command: echo\n    env:\n      K: "***"\n      L: |\n        v\n');
    expect(r).toEqual({
      ok: true,
      values: [
        { pointer: "/jobs/a~1b/env/K", value: "***", line: 5, column: 10 },
        { pointer: "/jobs/a~1b/env/L", value: "v\n", line: 6, column: 10 },
      ],
    });
  });
});
