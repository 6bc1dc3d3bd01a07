/**
 * `auth.rbac` (CONTRACT §5): role -> `"METHOD /path/pattern"` rules. In a
 * pattern `*` is exactly one non-empty path segment and a final `**` any rest (also
 * nothing); other segments are literal. Method `*` is any method, and a
 * `GET` rule also allows `HEAD`. Paths are matched as the router
 * understood them, after `api.base_path` is stripped.
 */
export interface Rule {
  method: string;
  segments: string[];
  /** The pattern ends in `**`. */
  rest: boolean;
}

export interface CompiledRbac {
  roles: Map<string, Rule[]>;
  /** One line per rule that cannot be used (it is skipped). */
  warnings: string[];
}

export function compileRbac(rbac: Readonly<Record<string, readonly string[]>>): CompiledRbac {
  const roles = new Map<string, Rule[]>();
  const warnings: string[] = [];
  for (const [role, rules] of Object.entries(rbac)) {
    const compiled: Rule[] = [];
    rules.forEach((text, i) => {
      const r = compileRule(text);
      if (typeof r === "string") warnings.push(`auth.rbac.${role}[${i}]: "${text}" ${r}; the rule is ignored`);
      else compiled.push(r);
    });
    roles.set(role, compiled);
  }
  return { roles, warnings };
}

export function compileRule(text: string): Rule | string {
  const m = /^\s*(\S+)\s+(\/\S*)\s*$/.exec(text);
  if (!m) return 'is not "METHOD /path/pattern" (e.g. "GET /api/**")';
  const method = m[1]!.toUpperCase();
  if (method !== "*" && !/^[A-Z]+$/.test(method)) return `has an invalid method "${m[1]}"`;
  const segments = splitPath(m[2]!);
  const rest = segments[segments.length - 1] === "**";
  if (rest) segments.pop();
  if (segments.includes("**")) return "uses ** before the end (** matches the rest of a path only)";
  return { method, segments, rest };
}

/** `/` -> [], `/api/jobs` -> ["api", "jobs"], `/api/jobs/` -> ["api", "jobs", ""]. */
export function splitPath(path: string): string[] {
  if (path === "/" || path === "") return [];
  return path.replace(/^\//, "").split("/");
}

export function ruleAllows(rule: Rule, method: string, segments: readonly string[]): boolean {
  if (rule.method !== "*" && rule.method !== method && !(rule.method === "GET" && method === "HEAD")) return false;
  if (rule.rest ? segments.length < rule.segments.length : segments.length !== rule.segments.length) return false;
  for (let i = 0; i < rule.segments.length; i++) {
    const want = rule.segments[i]!;
    if (want === "*" ? segments[i] === "" : want !== segments[i]) return false;
  }
  return true;
}

/** Whether `role` may call `method` on the path `segments`; an unknown role may call nothing. */
export function roleAllows(rbac: CompiledRbac, role: string, method: string, segments: readonly string[]): boolean {
  const rules = rbac.roles.get(role);
  if (!rules) return false;
  const m = method.toUpperCase();
  return rules.some((r) => ruleAllows(r, m, segments));
}
