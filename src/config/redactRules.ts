/**
 * Which values of svc.yaml and svcd.yaml are secret (CONTRACT §5, §7.5): one
 * declarative table per file, read by the redactor (redactText.ts) and by
 * docs/SECURITY.md. A rule marks a whole subtree: every scalar at or under a
 * matching path is secret, whatever its type or YAML form.
 *
 * Paths are dotted map keys; sequence items are their index. In a pattern,
 * `*` is any one key or index and `**` any number of them (none included).
 */

export type ConfigKind = "svc.yaml" | "svcd.yaml";

export interface SecretRule {
  /** Dotted path pattern, e.g. `jobs.*.env.*`. */
  path: string;
  /**
   * Only when the map holding the matched key also has this key set to
   * `true` (`secret: true` beside a param's `default`). Where that map cannot
   * be seen (inside a comment) the rule applies.
   */
  whenSibling?: string;
}

export interface SecretRules {
  paths: readonly SecretRule[];
  /** Every scalar whose text contains `${env:` is secret. */
  envReferences: boolean;
}

export const SECRET_RULES: Readonly<Record<ConfigKind, SecretRules>> = {
  "svcd.yaml": {
    paths: [
      { path: "auth.bearer.token" },
      { path: "auth.basic.users.*.password_hash" },
      { path: "**.password" },
      { path: "**.client_secret" },
      { path: "executor.global_env.*" },
    ],
    envReferences: true,
  },
  "svc.yaml": {
    paths: [
      { path: "jobs.*.env.*" },
      { path: "defaults.env.*" },
      { path: "integrations.*.webhook_url" },
      { path: "integrations.*.routing_key" },
      { path: "integrations.*.username" },
      { path: "integrations.*.password" },
      { path: "jobs.*.params.*.default", whenSibling: "secret" },
      { path: "defaults.params.*.default", whenSibling: "secret" },
    ],
    // `${env:}` resolves only in env values and integration fields here, which are secret already.
    envReferences: false,
  },
};

/** A compiled pattern: its segments, `*` and `**` kept as such. */
interface Compiled {
  segments: string[];
  whenSibling: string | null;
}

export class SecretMatcher {
  private readonly compiled: Compiled[];
  /** Literal last segments (`token`, `password_hash`...): a commented-out key with such a name is secret anywhere. */
  readonly secretNames: ReadonlySet<string>;
  readonly envReferences: boolean;

  constructor(rules: SecretRules) {
    this.compiled = rules.paths.map((r) => ({ segments: r.path.split("."), whenSibling: r.whenSibling ?? null }));
    this.envReferences = rules.envReferences;
    this.secretNames = new Set(
      this.compiled.filter((c) => c.whenSibling === null).map((c) => c.segments[c.segments.length - 1]!).filter((s) => s !== "*" && s !== "**"),
    );
  }

  /**
   * Whether `path` is at or under a secret path. `sibling(depth, key)` answers
   * whether the map at `path.slice(0, depth)` has `key: true`; null means it
   * cannot be known (the rule then applies).
   */
  isSecret(path: readonly string[], sibling: (depth: number, key: string) => boolean | null): boolean {
    for (const c of this.compiled) {
      for (const end of prefixEnds(c.segments, path)) {
        if (c.whenSibling === null) return true;
        const v = sibling(end - 1, c.whenSibling);
        if (v === null || v) return true;
      }
    }
    return false;
  }

  /** Whether a scalar's text makes it secret by itself (`${env:...}` in svcd.yaml). */
  isSecretText(text: string): boolean {
    return this.envReferences && text.includes("${env:");
  }
}

/** Every length k such that `pattern` matches `path.slice(0, k)`. */
function prefixEnds(pattern: readonly string[], path: readonly string[]): number[] {
  const out = new Set<number>();
  const go = (pi: number, si: number): void => {
    if (pi === pattern.length) {
      out.add(si);
      return;
    }
    const p = pattern[pi]!;
    if (p === "**") {
      for (let k = si; k <= path.length; k++) go(pi + 1, k);
      return;
    }
    if (si < path.length && (p === "*" || p === path[si])) go(pi + 1, si + 1);
  };
  go(0, 0);
  return [...out];
}

const MATCHERS: Readonly<Record<ConfigKind, SecretMatcher>> = {
  "svc.yaml": new SecretMatcher(SECRET_RULES["svc.yaml"]),
  "svcd.yaml": new SecretMatcher(SECRET_RULES["svcd.yaml"]),
};

export function secretMatcher(kind: ConfigKind): SecretMatcher {
  return MATCHERS[kind];
}
