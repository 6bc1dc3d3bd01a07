/**
 * A config file's text with every secret value replaced by `"***"`
 * (CONTRACT §5, §7.5), found from the parsed document, never by matching
 * lines: the `yaml` package gives every scalar's source range, whatever its
 * form (plain, quoted, block `|` / `>`, multi-line, flow, anchored, aliased,
 * merged with `<<`). Which paths are secret: redactRules.ts.
 *
 * Invariants: the line count and every line break stay (a multi-line value
 * becomes `"***"` on its first line and empty lines after, and text after it
 * on its last line keeps its column), so positions of later errors still
 * match; the result parses as YAML again when the input did. A text that
 * does not parse is never returned: the caller gets the parse errors.
 *
 * Comments are kept, except commented-out secrets: a comment that reads as
 * `key: value` where that key would be secret at that place (by its
 * indentation), or whose key is a secret name anywhere (`token`,
 * `password_hash`...), or that holds `${env:` in svcd.yaml, has the value
 * replaced the same way.
 */
import type * as YamlLib from "yaml";
import { secretMatcher, type ConfigKind, type SecretMatcher } from "./redactRules.js";
import { badKey, yaml } from "./yamlSource.js";
import { yamlProblem } from "./yamlErrors.js";

export const MASK = '"***"';

/** A YAML syntax error, where it is (1-based). */
export interface TextIssue {
  line: number;
  column: number;
  message: string;
}

/** A secret scalar of a parsed file: its JSON pointer, value and position. */
export interface SecretValue {
  pointer: string;
  value: unknown;
  line: number;
  column: number;
  /** A commented-out secret. */
  inComment?: boolean;
}

export type RedactResult = { ok: true; text: string } | { ok: false; errors: TextIssue[] };

/**
 * A walk that visits more nodes than this many times the document's own
 * nodes (plus a floor) is refused: its aliases expand without end (an alias
 * bomb). A base job merged into every other job is about 10 times.
 */
const VISITS_PER_NODE = 20;
const VISITS_FLOOR = 20_000;

export function redactConfigText(kind: ConfigKind, text: string): RedactResult {
  const a = analyse(kind, text);
  if (!a.ok) return a;
  return { ok: true, text: applyEdits(text, [...a.walk.edits, ...a.inComments.edits]) };
}

/**
 * The secret values of a text, or its parse errors (for the save guard
 * against `"***"` placeholders). A commented-out secret has the pointer of
 * the place it was commented out at and `inComment`.
 */
export function secretValues(kind: ConfigKind, text: string): { ok: true; values: SecretValue[] } | { ok: false; errors: TextIssue[] } {
  const a = analyse(kind, text);
  if (!a.ok) return a;
  const value = (s: FoundSecret, inComment: boolean): SecretValue => {
    const lp = a.lineCounter.linePos(s.offset);
    return { pointer: pointer(s.path), value: s.value, line: lp.line, column: lp.col, ...(inComment ? { inComment } : {}) };
  };
  return { ok: true, values: [...a.walk.secrets.map((s) => value(s, false)), ...a.inComments.secrets.map((s) => value(s, true))] };
}

/**
 * The text values that are secret at one place and plain at another: a
 * scalar anchored in a plain field and aliased into a secret one
 * (`description: &t s3cret` with `env: {TOKEN: *t}`). The source view
 * masks the scalar where it is written; the effective views (built from the
 * loaded values, which no longer know their anchors) hide these values
 * wherever they show them (views.ts). Empty for a text that does not parse.
 */
export function exposedSecrets(kind: ConfigKind, text: string): string[] {
  const a = analyse(kind, text);
  if (!a.ok) return [];
  const out = new Set<string>();
  for (const n of a.walk.hidden) {
    const v = (n as YamlLib.Scalar).value;
    if (a.walk.shown.has(n) && typeof v === "string" && v !== "") out.add(v);
  }
  return [...out];
}

// ---- parsing -----------------------------------------------------------------

interface CommentToken {
  offset: number;
  source: string;
}

type Analysis =
  | { ok: true; walk: Walk; inComments: Found; lineCounter: YamlLib.LineCounter }
  | { ok: false; errors: TextIssue[] };

function analyse(kind: ConfigKind, text: string): Analysis {
  const Y = yaml();
  const lineCounter = new Y.LineCounter();
  const tokens = Array.from(new Y.Parser(lineCounter.addNewLine).parse(text));
  // uniqueKeys off: a repeated key is the loader's error to report; both copies are walked here.
  const docs = Array.from(new Y.Composer({ merge: true, uniqueKeys: false, prettyErrors: false }).compose(tokens, true, text.length));
  const errors: TextIssue[] = [];
  for (const d of docs) {
    for (const e of d.errors) {
      const lp = lineCounter.linePos(e.pos[0]);
      errors.push({ line: lp.line, column: lp.col, message: `YAML: ${yamlProblem(e.message)}` });
    }
  }
  // A key that is a map or a list, or over several lines, is refused as the loader refuses it: the
  // walk reads values, and what such a key holds would be shown as written.
  for (const d of docs) {
    const bad = badKey(Y, d, text);
    if (bad === null) continue;
    const lp = lineCounter.linePos(bad.at);
    errors.push({ line: lp.line, column: lp.col, message: `YAML: ${bad.why}` });
    break;
  }
  if (errors.length > 0) return { ok: false, errors };
  const walk = new Walk(secretMatcher(kind), text);
  for (const d of docs) walk.document(d);
  if (walk.bomb !== null) {
    const lp = lineCounter.linePos(walk.bomb.offset);
    return {
      ok: false,
      errors: [{ line: lp.line, column: lp.col, message: `YAML: the aliases expand to more than ${walk.bomb.limit} nodes (an alias bomb?); write the values out instead` }],
    };
  }
  const comments: CommentToken[] = [];
  for (const t of tokens) collectComments(t, comments);
  return { ok: true, walk, inComments: commentSecrets(walk, comments, secretMatcher(kind), lineCounter, text), lineCounter };
}

function collectComments(t: unknown, out: CommentToken[]): void {
  if (Array.isArray(t)) {
    for (const x of t) collectComments(x, out);
    return;
  }
  if (t === null || typeof t !== "object") return;
  const tok = t as { type?: unknown; offset?: unknown; source?: unknown };
  if (tok.type === "comment" && typeof tok.offset === "number" && typeof tok.source === "string") {
    out.push({ offset: tok.offset, source: tok.source });
    return;
  }
  for (const v of Object.values(t)) if (v !== null && typeof v === "object") collectComments(v, out);
}

// ---- the walk over the document ----------------------------------------------

interface Edit {
  start: number;
  end: number;
  text: string;
}

interface FoundSecret {
  path: string[];
  value: unknown;
  offset: number;
}

/** Secrets found and the edits that hide them. */
interface Found {
  edits: Edit[];
  secrets: FoundSecret[];
}

/** A key or sequence item with its path (one per path when aliases reach it): the places a comment can sit in. */
interface Entry {
  offset: number;
  path: string[];
  /** The key's value (an alias resolved), whose places are the places of a comment under the key. */
  value?: YNode;
}

type YNode = YamlLib.Node;

/**
 * Visits every node with its path. `ancestors[d]` is the node at
 * `path.slice(0, d)`, for the `secret: true` sibling test. A node reached
 * through aliases is visited once per path. `extraSecret` adds a test
 * (comments: secret key names).
 */
class Walk {
  readonly edits: Edit[] = [];
  readonly entries: Entry[] = [];
  readonly secrets: FoundSecret[] = [];
  /** Scalars left as written at some path, and scalars masked at some path (an alias can do both to one scalar). */
  readonly shown = new Set<YNode>();
  readonly hidden = new Set<YNode>();
  /** Every path each map and sequence is reached at (more than one through aliases and merges). */
  readonly places = new Map<YNode, string[][]>();
  private visits = 0;
  private limit = 0;
  /** Where the last alias was met: where an alias bomb is reported. */
  private lastAlias = 0;
  /** Set when the visits passed the limit (the walk then stops): where, and the limit. */
  bomb: { offset: number; limit: number } | null = null;
  private doc: YamlLib.Document | null = null;
  private anchors = new Map<string, YNode[]>();
  private readonly Y = yaml();

  constructor(
    private readonly matcher: SecretMatcher,
    /** The text the document was parsed from (ranges are offsets into it). */
    private readonly source: string,
    private readonly extraSecret: (path: readonly string[]) => boolean = () => false,
    private readonly root: readonly string[] = [],
  ) {}

  document(d: YamlLib.Document): void {
    this.doc = d;
    const index = indexOf(this.Y, d);
    this.anchors = index.anchors;
    this.visits = 0;
    this.limit = VISITS_PER_NODE * index.nodes + VISITS_FLOOR;
    const top = d.contents as YNode | null;
    if (top) this.visit(top, [...this.root], [top], false);
  }

  private visit(node: unknown, path: string[], ancestors: unknown[], inherited: boolean): void {
    const Y = this.Y;
    if (this.exceeded()) return;
    const secret = inherited || this.isSecret(path, ancestors);
    if (Y.isAlias(node)) {
      this.lastAlias = node.range?.[0] ?? this.lastAlias;
      const target = this.resolve(node);
      if (target === undefined) return;
      if (secret && Y.isScalar(target) && node.range) this.mask(node.range[0], node.range[1], path, target.value, false);
      this.visit(target, path, [...ancestors.slice(0, -1), target], inherited);
      return;
    }
    if (Y.isScalar(node)) {
      const text = typeof node.value === "string" ? node.value : "";
      const hide = secret || this.matcher.isSecretText(text);
      (hide ? this.hidden : this.shown).add(node);
      if (hide && node.range) {
        const block = node.type === "BLOCK_LITERAL" || node.type === "BLOCK_FOLDED";
        this.mask(node.range[0], node.range[1], path, node.value, block);
      }
      return;
    }
    if (Y.isMap(node)) {
      this.place(node, path);
      for (const pair of node.items) this.pair(pair, path, ancestors, secret);
      return;
    }
    if (Y.isSeq(node)) {
      this.place(node, path);
      node.items.forEach((item, i) => {
        const p = [...path, String(i)];
        if (Y.isNode(item) && item.range) this.entries.push({ offset: item.range[0], path: p });
        this.visit(item, p, [...ancestors, item], secret);
      });
    }
  }

  private pair(pair: YamlLib.Pair, path: string[], ancestors: unknown[], secret: boolean): void {
    const Y = this.Y;
    const key = pair.key;
    if (isMergeKey(Y, key)) {
      // `<<: *base` / `<<: [*a, *b]` / `<<: {..}`: the merged pairs sit at this map's path.
      this.merged(pair.value, path, ancestors, secret);
      return;
    }
    const name = keyText(Y, Y.isAlias(key) ? this.resolve(key) : key);
    const p = [...path, name];
    if (Y.isNode(key) && key.range) {
      const value = Y.isAlias(pair.value) ? this.resolve(pair.value) : Y.isNode(pair.value) ? pair.value : undefined;
      this.entries.push({ offset: key.range[0], path: p, ...(value ? { value } : {}) });
    }
    if (pair.value !== null && pair.value !== undefined) this.visit(pair.value, p, [...ancestors, pair.value], secret);
  }

  private merged(value: unknown, path: string[], ancestors: unknown[], secret: boolean): void {
    const Y = this.Y;
    if (this.exceeded()) return;
    if (Y.isAlias(value)) {
      this.lastAlias = value.range?.[0] ?? this.lastAlias;
      this.merged(this.resolve(value), path, ancestors, secret);
    } else if (Y.isMap(value)) {
      this.place(value, path);
      for (const pair of value.items) this.pair(pair, path, ancestors, secret);
    } else if (Y.isSeq(value)) {
      for (const item of value.items) this.merged(item, path, ancestors, secret);
    }
  }

  /** Counts a visit; true once the walk is over its limit. */
  private exceeded(): boolean {
    if (this.bomb === null && ++this.visits > this.limit) this.bomb = { offset: this.lastAlias, limit: this.limit };
    return this.bomb !== null;
  }

  private place(node: YNode, path: string[]): void {
    const list = this.places.get(node);
    if (list) list.push(path);
    else this.places.set(node, [path]);
  }

  /**
   * The node an alias names: the last node before it with that anchor.
   * (`Alias.resolve` searches the whole document on every call: an alias
   * bomb would take seconds before the visit limit stops it.)
   */
  private resolve(alias: YamlLib.Alias): YNode | undefined {
    const at = alias.range?.[0] ?? Number.MAX_SAFE_INTEGER;
    const nodes = this.anchors.get(alias.source) ?? [];
    let found: YNode | undefined;
    for (const n of nodes) if ((n.range?.[0] ?? 0) < at) found = n;
    return found;
  }

  private isSecret(path: readonly string[], ancestors: readonly unknown[]): boolean {
    const root = this.root.length;
    const sibling = (depth: number, key: string): boolean | null => {
      if (depth < root) return null; // above a comment's own text: unknown
      const holder = ancestors[depth - root];
      if (holder === undefined) return null;
      return siblingIsTrue(this.Y, holder, key, this.doc!, (a) => this.resolve(a));
    };
    return this.matcher.isSecret(path, sibling) || this.extraSecret(path);
  }

  /**
   * Replaces [start, end) with `"***"`, keeping its line breaks and the
   * column of what follows on its last line. A block scalar keeps its header
   * comment (the comment pass looks at it like any other).
   */
  private mask(start: number, end: number, path: string[], value: unknown, block: boolean): void {
    if (end <= start) return;
    this.secrets.push({ path, value, offset: start });
    const text = this.source;
    if (block) {
      const header = /^[|>][0-9+-]*/.exec(text.slice(start, end))![0];
      this.edits.push({ start, end: start + header.length, text: MASK });
      const nl = text.indexOf("\n", start);
      if (nl !== -1 && nl < end) this.edits.push({ start: nl, end, text: breaksOnly(text, nl, end) });
      return;
    }
    this.edits.push({ start, end, text: MASK + breaksOnly(text, start, end) });
  }
}

/** The line breaks of text[start, end), then spaces up to the column `end` had when text follows it on that line. */
function breaksOnly(text: string, start: number, end: number): string {
  const slice = text.slice(start, end);
  const breaks = slice.replace(/[^\r\n]/g, "");
  if (breaks === "") return "";
  const next = text[end];
  if (next === undefined || next === "\n" || next === "\r") return breaks;
  const lastBreak = slice.lastIndexOf("\n");
  return breaks + " ".repeat(slice.length - lastBreak - 1);
}

/** The document's anchored nodes by anchor name, in source order, and how many nodes it has. */
function indexOf(Y: typeof YamlLib, doc: YamlLib.Document): { anchors: Map<string, YNode[]>; nodes: number } {
  const anchors = new Map<string, YNode[]>();
  let nodes = 0;
  Y.visit(doc, (_key, node) => {
    if (!Y.isNode(node)) return;
    nodes++;
    if (node.anchor) {
      const list = anchors.get(node.anchor) ?? [];
      list.push(node);
      anchors.set(node.anchor, list);
    }
  });
  return { anchors, nodes };
}

function isMergeKey(Y: typeof YamlLib, key: unknown): boolean {
  if (!Y.isScalar(key)) return false;
  return typeof key.value === "symbol" || (key.value === "<<" && key.type === "PLAIN");
}

function keyText(Y: typeof YamlLib, k: unknown): string {
  if (Y.isScalar(k)) return String(k.value);
  if (Y.isNode(k)) return String(k);
  return String(k ?? "");
}

function siblingIsTrue(Y: typeof YamlLib, holder: unknown, key: string, doc: YamlLib.Document, resolve: (a: YamlLib.Alias) => unknown): boolean | null {
  let n = holder;
  if (Y.isAlias(n)) n = resolve(n);
  if (!Y.isMap(n)) return false;
  try {
    const js = n.toJS(doc, { maxAliasCount: 100 }) as Record<string, unknown> | null;
    return js !== null && typeof js === "object" && js[key] === true;
  } catch {
    return null; // cannot tell: the rule applies
  }
}

function pointer(path: readonly string[]): string {
  return path.map((s) => `/${s.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

// ---- comments ----------------------------------------------------------------

/** `key: value` at the start of a comment's text, when YAML cannot read the text. */
const LOOSE_PAIR = /^(\s*(?:-\s+)*["']?([^"'\s:#{}[\],][^"':#{}[\]]*?)["']?\s*:[ \t]+)(\S.*?)\s*$/;

/** A comment that many places reach (through aliases) is not read at each: all its values are hidden. */
const MAX_COMMENT_PLACES = 64;

interface Placed extends CommentToken {
  line: number;
  /** 1-based column of the `#`. */
  col: number;
  /** Nothing but spaces before the `#` on its line. */
  ownLine: boolean;
}

/**
 * Commented-out secrets. Consecutive whole-line comments with their `#` in
 * one column are read together as YAML (an editor's "comment out" of a
 * block keeps it readable so), placed where their text would sit: at the
 * `#`'s column, or at their text's column (for a `#` written further left).
 * A comment after a value belongs to that value's key. The same rules as
 * for values then pick the secrets, plus the secret key names anywhere.
 */
function commentSecrets(walk: Walk, comments: readonly CommentToken[], matcher: SecretMatcher, lineCounter: YamlLib.LineCounter, text: string): Found {
  const { entries: found, places } = walk;
  const out: Found = { edits: [], secrets: [] };
  if (comments.length === 0) return out;
  const entries = [...found].sort((a, b) => a.offset - b.offset);
  const colOf = (offset: number) => lineCounter.linePos(offset).col;
  const placed: Placed[] = comments.map((c) => {
    const lp = lineCounter.linePos(c.offset);
    const lineStart = c.offset - (lp.col - 1);
    return { ...c, line: lp.line, col: lp.col, ownLine: text.slice(lineStart, c.offset).trim() === "" };
  });
  const add = (f: Found) => {
    out.edits.push(...f.edits);
    out.secrets.push(...f.secrets);
  };
  for (const group of groups(placed)) {
    const first = group[0]!;
    let contexts: string[][];
    if (first.ownLine) {
      const leads = group.map((c) => c.source.slice(1)).filter((b) => b.trim() !== "").map((b) => b.length - b.trimStart().length);
      const keyCol = first.col + 1 + (leads.length > 0 ? Math.min(...leads) : 0);
      const cols = first.col > 1 ? [first.col, keyCol] : [keyCol, keyCol - 1, keyCol - 2];
      contexts = unique(cols.flatMap((col) => contextsAt(entries, first.offset, col, colOf, places)));
    } else {
      const i = indexBefore(entries, first.offset) - 1;
      contexts = i < 0 ? [[]] : unique(samePlace(entries, i).flatMap((e) => [...childPlaces(e, places), e.path.slice(0, -1)]));
    }
    const found = groupSecrets(group, contexts, matcher);
    if (found !== null) {
      add(found);
      continue;
    }
    // Not YAML as a block: each line on its own.
    for (const c of group) add(groupSecrets([c], contexts, matcher) ?? looseSecrets(c, contexts, matcher));
  }
  return out;
}

/** Own-line comments on consecutive lines with the same `#` column form one group; any other comment is alone. */
function groups(placed: readonly Placed[]): Placed[][] {
  const out: Placed[][] = [];
  for (const c of placed) {
    const last = out[out.length - 1];
    const prev = last?.[last.length - 1];
    if (last && prev && c.ownLine && prev.ownLine && c.line === prev.line + 1 && c.col === prev.col) last.push(c);
    else out.push([c]);
  }
  return out;
}

/**
 * The secrets of a group read as one YAML text under each of `contexts`,
 * and the edits hiding them; null when the text is not YAML. A value over
 * several comment lines is hidden on each of them.
 */
function groupSecrets(group: readonly Placed[], contexts: readonly string[][], matcher: SecretMatcher): Found | null {
  const bodies = group.map((c) => c.source.slice(1));
  const block = bodies.join("\n");
  if (!block.includes(":") && !matcher.isSecretText(block) && !block.trimStart().startsWith("-")) return { edits: [], secrets: [] };
  const Y = yaml();
  const doc = Y.parseDocument(block, { merge: true, uniqueKeys: false, prettyErrors: false });
  if (doc.errors.length > 0) return null;
  // A comment inside a map that aliases bring to very many places (a base job merged into every job):
  // rather than read it at each, hide every value in it.
  const many = contexts.length > MAX_COMMENT_PLACES;
  const named = (path: readonly string[]) => many || (path.length > 0 && matcher.secretNames.has(path[path.length - 1]!));
  const starts: number[] = [];
  let at = 0;
  for (const b of bodies) {
    starts.push(at);
    at += b.length + 1;
  }
  /** Offset in the file of offset `o` of the block. */
  const absolute = (o: number): number => {
    let i = starts.length - 1;
    while (i > 0 && starts[i]! > o) i--;
    return group[i]!.offset + 1 + (o - starts[i]!);
  };
  const out: Found = { edits: [], secrets: [] };
  const seen = new Set<string>();
  for (const ctx of many ? [[]] : contexts) {
    const sub = new Walk(matcher, block, named, ctx);
    sub.document(doc);
    if (sub.bomb !== null) {
      // An alias bomb in a comment: hide all of it.
      return { edits: group.map((c) => ({ start: c.offset + 1, end: c.offset + c.source.length, text: ` ${MASK}` })), secrets: [] };
    }
    for (const x of sub.secrets) out.secrets.push({ ...x, offset: absolute(x.offset) });
    for (const e of sub.edits) {
      let masked = !e.text.startsWith(MASK);
      for (let i = 0; i < bodies.length; i++) {
        const from = Math.max(e.start, starts[i]!);
        const to = Math.min(e.end, starts[i]! + bodies[i]!.length);
        if (to <= from) continue;
        const start = group[i]!.offset + 1 + (from - starts[i]!);
        const key = `${start}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.edits.push({ start, end: start + (to - from), text: masked ? "" : MASK });
        masked = true;
      }
    }
  }
  return out;
}

/** A comment that is not YAML but starts like `key: value`. */
function looseSecrets(c: Placed, contexts: readonly string[][], matcher: SecretMatcher): Found {
  const body = c.source.slice(1);
  const bodyStart = c.offset + 1;
  const m = LOOSE_PAIR.exec(body);
  if (!m) {
    if (!matcher.isSecretText(body)) return { edits: [], secrets: [] };
    return { edits: [{ start: bodyStart, end: bodyStart + body.length, text: ` ${MASK}` }], secrets: [{ path: [], value: body.trim(), offset: bodyStart }] };
  }
  const key = m[2]!.trim();
  const secret = matcher.isSecretText(m[3]!) || matcher.secretNames.has(key) || contexts.some((ctx) => matcher.isSecret([...ctx, key], () => null));
  if (!secret) return { edits: [], secrets: [] };
  const start = bodyStart + m[1]!.length;
  return { edits: [{ start, end: start + m[3]!.length, text: MASK }], secrets: [{ path: [...(contexts[0] ?? []), key], value: m[3]!, offset: start }] };
}

/**
 * The map a commented-out key written at column `col` would belong to: the
 * nearest earlier key at that column is a sibling (their map), one further
 * left is its parent.
 */
function contextsAt(entries: readonly Entry[], offset: number, col: number, colOf: (o: number) => number, places: ReadonlyMap<YNode, string[][]>): string[][] {
  for (let i = indexBefore(entries, offset) - 1; i >= 0; i--) {
    const c = colOf(entries[i]!.offset);
    if (c > col) continue;
    return samePlace(entries, i).flatMap((e) => (c === col ? [e.path.slice(0, -1)] : childPlaces(e, places)));
  }
  return [[]];
}

/** Where what is written under a key sits: its own path, and every other path its value is reached at. */
function childPlaces(e: Entry, places: ReadonlyMap<YNode, string[][]>): string[][] {
  return [e.path, ...((e.value && places.get(e.value)) ?? [])];
}

/** Every entry at the place of `entries[i]` (one per path that reaches it). */
function samePlace(entries: readonly Entry[], i: number): Entry[] {
  const at = entries[i]!.offset;
  let from = i;
  while (from > 0 && entries[from - 1]!.offset === at) from--;
  let to = i;
  while (to + 1 < entries.length && entries[to + 1]!.offset === at) to++;
  return entries.slice(from, to + 1);
}

/** The number of entries that start before `offset` (entries are sorted). */
function indexBefore(entries: readonly Entry[], offset: number): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (entries[mid]!.offset < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function unique(paths: string[][]): string[][] {
  const seen = new Set<string>();
  return paths.filter((p) => {
    const k = p.join("\u0000");
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

// ---- applying ----------------------------------------------------------------

function applyEdits(text: string, edits: readonly Edit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start || b.end - a.end);
  let out = "";
  let at = 0;
  for (const e of sorted) {
    if (e.start < at) continue; // the same range reached twice (an anchor through two aliases)
    out += text.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + text.slice(at);
}
