/**
 * Random svc.yaml / svcd.yaml pairs holding random secrets, each rendered in
 * random YAML forms through the `yaml` Document API: plain, double- and
 * single-quoted, block literal and folded scalars, folding at a random line
 * width (multi-line plain and quoted scalars), flow or block collections,
 * anchors with aliases (scalar and map, secret-to-secret and
 * non-secret-to-secret), merge keys, quoted keys, comments beside values and
 * commented-out secrets. For the redaction property tests.
 *
 * Every secret contains MARK followed by its own number, and nothing else in
 * a generated config contains MARK: finding MARK in any output is a leak.
 */
import fc from "fast-check";
import * as Y from "yaml";
import { mulberry32 } from "./mulberry32.js";

export const MARK = "ZQX";

export interface GeneratedConfig {
  svc: string;
  svcd: string;
  /** Every secret written (in values or comments), as its value. */
  secrets: string[];
  /** What each redacted text must parse to: the file's data with every value holding MARK read `***`. */
  expectedSvc: unknown;
  expectedSvcd: unknown;
}

export interface GenerateOptions {
  /**
   * Configs a real daemon must load: no keys the schema refuses, auth by `tokenFile` plus the generated inline
   * token, and this fixed `log` section.
   */
  loadable?: { tokenFile: string; log: Record<string, unknown>; envSecretVar: string };
}

/** The shape of one config, before rendering: how many of each thing, and the random numbers that pick forms. */
interface Shape {
  jobs: { env: number; params: boolean; description: boolean }[];
  defaultsEnv: number;
  defaultsParams: boolean;
  integrations: { chat: boolean; pager: boolean; smtp: boolean };
  users: number;
  globalEnv: number;
  tokenFromEnv: boolean;
  extraPasswords: boolean;
  seed: number;
  pieces: string[];
}

/** Fragments a secret is made of besides its marked words: YAML's special characters, spaces, line breaks. */
const SEPARATORS = [" ", "  ", "\n", " # ", "#", ": ", ":", '"', "'", "\\", "{", "}", "[", "]", ", ", "&", "*", "!", "|", ">", "%", "@", "`", "é", "\t", "- ", "\\n", "${env:NOPE}", "---", "..."];

const shapeArb: fc.Arbitrary<Shape> = fc.record({
  jobs: fc.array(fc.record({ env: fc.integer({ min: 0, max: 3 }), params: fc.boolean(), description: fc.boolean() }), { minLength: 1, maxLength: 3 }),
  defaultsEnv: fc.integer({ min: 0, max: 2 }),
  defaultsParams: fc.boolean(),
  integrations: fc.record({ chat: fc.boolean(), pager: fc.boolean(), smtp: fc.boolean() }),
  users: fc.integer({ min: 0, max: 2 }),
  globalEnv: fc.integer({ min: 0, max: 3 }),
  tokenFromEnv: fc.boolean(),
  extraPasswords: fc.boolean(),
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  pieces: fc.array(fc.oneof(fc.constantFrom(...SEPARATORS), fc.stringMatching(/^[a-z0-9]{1,6}$/)), { minLength: 40, maxLength: 80 }),
});

export function configArb(opts: GenerateOptions = {}): fc.Arbitrary<GeneratedConfig> {
  return shapeArb.map((s) => render(s, opts));
}

function render(shape: Shape, opts: GenerateOptions): GeneratedConfig {
  const rnd = mulberry32(shape.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const secrets: string[] = [];
  let n = 0;
  let piece = 0;
  /** A secret: marked words joined by random fragments; `oneWord` for a comment or a URL. */
  const secret = (oneWord = false, noEnvRef = false): string => {
    const id = n++;
    const words = oneWord ? 1 : 1 + Math.floor(rnd() * 3);
    let v = rnd() < 0.2 && !oneWord ? pick([" ", "\n", "- ", "#", "'"]) : "";
    for (let w = 0; w < words; w++) {
      if (w > 0) v += shape.pieces[piece++ % shape.pieces.length]!.replace(noEnvRef ? "${env:NOPE}" : "\u0000", "");
      const tail = oneWord ? "" : shape.pieces[piece++ % shape.pieces.length]!.replace(/\s/g, "").replace(noEnvRef ? "${env:NOPE}" : "\u0000", "");
      v += `${MARK}${id}w${w}${tail}`;
    }
    if (!oneWord && rnd() < 0.2) v += pick([" ", "\n", ":", " #"]);
    secrets.push(v);
    return v;
  };
  const word = () => pick(["alpha", "beta", "gamma", "delta", "nightly", "etl", "report"]);
  const loadable = opts.loadable;

  // ---- svc.yaml data
  const svc: Record<string, unknown> = {};
  const defaults: Record<string, unknown> = {};
  if (shape.defaultsEnv > 0) defaults.env = envMap("DEF", shape.defaultsEnv, secret);
  if (shape.defaultsParams) defaults.params = params(secret);
  if (Object.keys(defaults).length > 0) svc.defaults = defaults;
  const integrations: Record<string, unknown> = {};
  if (shape.integrations.chat) integrations.chat = { provider: "chat", webhook_url: `https://hooks.example/${secret(true)}` };
  if (shape.integrations.pager) integrations.pager = { provider: "pager", routing_key: secret() };
  if (shape.integrations.smtp) integrations.smtp = { provider: "smtp", host: "mail.local", from: "svc@example.org", username: secret(), password: secret() };
  if (Object.keys(integrations).length > 0) svc.integrations = integrations;
  const jobs: Record<string, unknown> = {};
  shape.jobs.forEach((j, i) => {
    const job: Record<string, unknown> = { command: "echo ok", frequency: "manual" };
    if (j.description) job.description = `${word()} ${word()}`;
    if (j.env > 0) job.env = envMap(`J${i}`, j.env, secret);
    if (j.params) job.params = params(secret);
    jobs[`job${i}`] = job;
  });
  svc.jobs = jobs;

  // ---- svcd.yaml data
  const svcd: Record<string, unknown> = {};
  const bearer: Record<string, unknown> = {};
  if (loadable) bearer.token_file = loadable.tokenFile;
  // An unset `${env:}` in the token would make the daemon refuse the file.
  bearer.token = shape.tokenFromEnv ? `\${env:${loadable?.envSecretVar ?? "SVC_SECRET_TOKEN"}}` : secret(false, true);
  const auth: Record<string, unknown> = { type: "bearer", bearer };
  if (shape.users > 0) {
    auth.basic = {
      users: Array.from({ length: shape.users }, (_, i) => ({ username: `user${i}`, password_hash: bcryptLike(secret, n), role: "viewer" })),
    };
  }
  svcd.auth = auth;
  const executor: Record<string, unknown> = { shell: "/bin/sh" };
  if (shape.globalEnv > 0) executor.global_env = envMap("G", shape.globalEnv, secret);
  svcd.executor = executor;
  if (loadable) svcd.log = loadable.log;
  else if (shape.extraPasswords) svcd.extra = { nested: { password: secret(), client_secret: secret() }, list: [{ password: secret() }] };

  const svcDoc = new Y.Document(svc);
  const svcdDoc = new Y.Document(svcd);
  for (const doc of [svcDoc, svcdDoc]) restyle(doc, rnd, pick, secret, loadable !== undefined);
  if (svcd.auth && rnd() < 0.5) commentOut(svcdDoc, ["auth", "bearer"], "token", secret(true), pick);
  const width = pick([0, 24, 40, 80]);
  const text = (d: Y.Document) => {
    const write = () => d.toString({ lineWidth: width, minContentWidth: 8 });
    const readable = (t: string) => Y.parseAllDocuments(t).every((x) => x.errors.length === 0);
    let t = write();
    if (readable(t)) return t;
    // The yaml package writes a few forms it cannot read back (some comments inside flow
    // collections, a plain multi-line value with a line ending in ":"): such a config is written
    // with block collections, then with the library's own choice of scalar styles.
    Y.visit(d, { Map: (_k, m) => void (m.flow = false), Seq: (_k, q) => void (q.flow = false) });
    t = write();
    if (readable(t)) return t;
    Y.visit(d, { Scalar: (_k, sc) => void (sc.type = undefined) });
    t = write();
    if (readable(t)) return t;
    throw new Error(`the generator wrote YAML it cannot read:\n${t}`);
  };
  return {
    svc: text(svcDoc),
    svcd: text(svcdDoc),
    secrets,
    expectedSvc: masked(Y.parse(text(svcDoc), { merge: true })),
    expectedSvcd: masked(Y.parse(text(svcdDoc), { merge: true }), true),
  };
}

function envMap(prefix: string, count: number, secret: () => string): Record<string, string> {
  const env: Record<string, string> = {};
  for (let i = 0; i < count; i++) env[`${prefix}_VAR_${i}`] = secret();
  return env;
}

function params(secret: () => string): Record<string, unknown> {
  return { token: { type: "string", secret: true, default: secret() }, region: { type: "string", default: "eu" } };
}

/** A 60-character bcrypt-shaped hash that holds a marker. */
function bcryptLike(secret: (oneWord?: boolean) => string, _n: number): string {
  const s = secret(true);
  const body = `${s}${"a".repeat(53)}`.slice(0, 53);
  return `$2b$10$${body}`;
}

/** The data with every string that holds MARK (and in svcd.yaml, `${env:`) replaced by `***`. */
export function masked(v: unknown, envRefs = false): unknown {
  if (typeof v === "string") return v.includes(MARK) || (envRefs && v.includes("${env:")) ? "***" : v;
  if (Array.isArray(v)) return v.map((x) => masked(x, envRefs));
  if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, masked(x, envRefs)]));
  return v;
}

const SCALAR_STYLES = [Y.Scalar.PLAIN, Y.Scalar.QUOTE_DOUBLE, Y.Scalar.QUOTE_SINGLE, Y.Scalar.BLOCK_LITERAL, Y.Scalar.BLOCK_FOLDED] as const;

/**
 * Random forms: scalar styles, flow or block collections, quoted keys,
 * comments beside values, anchors with aliases and merge keys.
 */
function restyle(doc: Y.Document, rnd: () => number, pick: <T>(xs: readonly T[]) => T, secret: (oneWord?: boolean) => string, loadable: boolean): void {
  // First the structure: a map alias (one job's env reused by another) or a merge key (a job made
  // from another); then the scalars still in the document get their forms and aliases.
  const jobs = doc.get("jobs");
  // Values kept at a place that is not secret, merged into a job's env (`env: {<<: *common}`):
  // secret only through the merge. Not for a daemon (an unknown top-level key is an error there).
  const root = doc.contents;
  const firstJob = Y.isMap(jobs) ? jobs.items[0]?.value : undefined;
  if (!loadable && Y.isMap(root) && Y.isMap(firstJob) && rnd() < 0.4) {
    const common = new Y.YAMLMap();
    const key = new Y.Scalar("SHARED_KEY");
    if (rnd() < 0.5) key.commentBefore = ` OLD_SHARED: ${secret(true)}`;
    common.items.push(new Y.Pair(key, new Y.Scalar(secret())));
    common.anchor = "common";
    root.items.unshift(new Y.Pair(new Y.Scalar("common_env"), common));
    const env = new Y.YAMLMap();
    env.items.push(new Y.Pair(new Y.Scalar("<<"), doc.createAlias(common, "common")));
    firstJob.set("env", env);
  }
  if (Y.isMap(jobs) && jobs.items.length >= 2) {
    const first = jobs.items[0]!.value;
    const last = jobs.items[jobs.items.length - 1]!;
    const firstEnv = Y.isMap(first) ? first.get("env", true) : undefined;
    const r = rnd();
    if (r < 0.3 && Y.isMap(firstEnv) && Y.isMap(last.value)) {
      firstEnv.anchor = "envs";
      last.value.set("env", doc.createAlias(firstEnv, "envs"));
    } else if (r < 0.6 && Y.isMap(first)) {
      first.anchor = "base";
      const merged = new Y.YAMLMap();
      merged.flow = rnd() < 0.3;
      merged.items.push(new Y.Pair(new Y.Scalar("<<"), doc.createAlias(first, "base")));
      merged.items.push(new Y.Pair(new Y.Scalar("description"), new Y.Scalar("merged job")));
      last.value = merged;
    }
  }
  type Leaf = { order: number; pair: Y.Pair<Y.Scalar, Y.Scalar> };
  const secretLeaves: Leaf[] = [];
  const plainLeaves: Leaf[] = [];
  let order = 0;
  const envMaps: Y.YAMLMap[] = [];
  Y.visit(doc, {
    Map(_k, map) {
      if (rnd() < 0.3) map.flow = true;
    },
    Seq(_k, seq) {
      if (rnd() < 0.4) seq.flow = true;
    },
    Pair(_k, pair, path) {
      const parent = path[path.length - 1];
      if (!Y.isMap(parent) || !Y.isScalar(pair.key)) return;
      // (A quoted `<<` is an ordinary key, not a merge.)
      if (rnd() < 0.15 && pair.key.value !== "<<") pair.key.type = pick([Y.Scalar.QUOTE_DOUBLE, Y.Scalar.QUOTE_SINGLE]);
      if (pair.key.value === "env" && Y.isMap(pair.value)) envMaps.push(pair.value);
      if (Y.isScalar(pair.value) && typeof pair.value.value === "string") {
        const leaf = { order: order++, pair: pair as Y.Pair<Y.Scalar, Y.Scalar> };
        (String(pair.value.value).includes(MARK) ? secretLeaves : plainLeaves).push(leaf);
      }
    },
    Scalar(key, node) {
      if (key === "key") return;
      node.type = pick(SCALAR_STYLES);
      if (typeof node.value === "string" && node.value.includes(MARK) && rnd() < 0.2) {
        node.comment = rnd() < 0.5 ? " rotated monthly" : ` was: ${secret(true)}`;
      }
    },
  });
  // Commented-out secrets inside env maps.
  for (const env of envMaps) {
    const first = env.items[0];
    if (first && Y.isScalar(first.key) && rnd() < 0.5) first.key.commentBefore = ` OLD_${Math.floor(rnd() * 100)}: ${secret(true)}`;
  }
  // A secret-to-secret scalar alias: the last secret value becomes the first (an alias follows its anchor).
  const used = new Set<Leaf>();
  // For a daemon, only between variables: a token or a hash must stay loadable.
  const aliasable = loadable ? secretLeaves.filter((l) => /_VAR_/.test(String(l.pair.key?.value))) : secretLeaves;
  if (aliasable.length >= 2 && rnd() < 0.5) {
    const [a, b] = [aliasable[0]!, aliasable[aliasable.length - 1]!];
    a.pair.value!.anchor = "shared";
    b.pair.value = doc.createAlias(a.pair.value!, "shared") as unknown as Y.Scalar;
    used.add(a).add(b);
  }
  // Non-secret place holding a secret, aliased into a later secret place (a description used as a password).
  const plain = plainLeaves.find((l) => Y.isScalar(l.pair.key) && l.pair.key.value === "description");
  const target = plain && secretLeaves.find((l) => l.order > plain.order && !used.has(l));
  if (!loadable && plain && target && rnd() < 0.5) {
    plain.pair.value = new Y.Scalar(secret());
    plain.pair.value.type = pick(SCALAR_STYLES);
    plain.pair.value.anchor = "described";
    target.pair.value = doc.createAlias(plain.pair.value, "described") as unknown as Y.Scalar;
  }
}

/** Adds `# key: value` before the first key of the map at `path` (a secret someone commented out). */
function commentOut(doc: Y.Document, path: string[], key: string, value: string, pick: <T>(xs: readonly T[]) => T): void {
  const map = doc.getIn(path, true);
  if (!Y.isMap(map) || map.items.length === 0) return;
  const first = map.items[0]!;
  if (Y.isScalar(first.key)) first.key.commentBefore = pick([` ${key}: ${value}`, `   ${key}: "${value}"`, ` - {${key}: ${value}}`]);
}
