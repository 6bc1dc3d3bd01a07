/**
 * YAML text -> plain data, plus a way to find where any path is written.
 *
 * Fast path: fastYaml (no positions). Only when the loader has issues to
 * report does it ask for positions, which parses again with positions on.
 * Anything outside fastYaml's subset, and every syntax error, goes to the
 * `yaml` package (loaded lazily: importing it costs ~35 ms), whose Document
 * carries ranges for the same lookup.
 */
import { createRequire } from "node:module";
import type * as YamlLib from "yaml";
import { fastParse, unpackPos, type PositionIndex } from "./fastYaml.js";
import type { Locate, Path, Position, RawIssue } from "./issues.js";
import { yamlProblem } from "./yamlErrors.js";

const require = createRequire(import.meta.url);
let yamlLib: typeof YamlLib | null = null;

/** The `yaml` package, loaded on first use. */
export function yaml(): typeof YamlLib {
  yamlLib ??= require("yaml") as typeof YamlLib;
  return yamlLib;
}

export type YamlResult =
  /** `aliased`: the text has a YAML alias (`*name`); the fast path has none. */
  | { ok: true; value: unknown; locator: () => Locate; aliased: boolean }
  | { ok: false; issues: RawIssue[] };

const FIRST_LINE: Position = { line: 1, column: 1 };

export function parseYamlText(text: string): YamlResult {
  const fast = fastParse(text);
  if (fast !== null) {
    let locate: Locate | null = null;
    return {
      ok: true,
      value: fast.value,
      locator: () => (locate ??= fastLocator(text)),
      aliased: false,
    };
  }
  return parseWithYaml(text);
}

function fastLocator(text: string): Locate {
  const withPos = fastParse(text, true);
  // Same text, same subset: the second parse cannot bail. Keep a fallback anyway.
  if (withPos === null) return documentLocator(text);
  return positionLocator(withPos.value, withPos.positions, firstContentLine(text));
}

function positionLocator(root: unknown, positions: PositionIndex, rootPos: Position): Locate {
  return (path: Path) => {
    let node: unknown = root;
    let at = rootPos;
    for (const seg of path) {
      if (node === null || typeof node !== "object") break;
      const p = positions.get(node)?.get(String(seg));
      if (p === undefined) break;
      at = unpackPos(p);
      node = (node as Record<string, unknown>)[String(seg)];
    }
    return at;
  };
}

function firstContentLine(text: string): Position {
  const lines = text.split("\n", 1000);
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i]!.trim();
    if (t !== "" && !t.startsWith("#")) return { line: i + 1, column: lines[i]!.length - lines[i]!.trimStart().length + 1 };
  }
  return FIRST_LINE;
}

function parseWithYaml(text: string): YamlResult {
  const Y = yaml();
  const lineCounter = new Y.LineCounter();
  let doc: YamlLib.Document.Parsed;
  try {
    doc = Y.parseDocument(text, { merge: true, prettyErrors: false, lineCounter, uniqueKeys: true });
  } catch (e) {
    return { ok: false, issues: [{ path: [], message: `cannot parse YAML: ${yamlProblem(firstLine(e))}`, at: FIRST_LINE }] };
  }
  const problems = [...doc.errors, ...doc.warnings];
  if (problems.length > 0) {
    return {
      ok: false,
      issues: problems.map((p) => {
        const lp = lineCounter.linePos(p.pos[0]);
        return {
          path: [],
          message: `YAML: ${yamlProblem(p.message)}`,
          at: lp.line > 0 ? { line: lp.line, column: lp.col } : FIRST_LINE,
        };
      }),
    };
  }
  // Keys are names. A key that is a map or a list would become the text of the whole map, values and
  // all (toJS warns, quoting it), and a key over several lines is text that a stray quote swallowed:
  // either would be quoted in "unknown field" errors and paths, secrets with it.
  const bad = badKey(Y, doc, text);
  if (bad !== null) {
    const lp = lineCounter.linePos(bad.at);
    return { ok: false, issues: [{ path: [], message: `YAML: ${bad.why}`, at: lp.line > 0 ? { line: lp.line, column: lp.col } : FIRST_LINE }] };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return { ok: false, issues: [{ path: [], message: `YAML: ${yamlProblem(firstLine(e))}`, at: FIRST_LINE }] };
  }
  const locate = nodeLocator(doc, lineCounter);
  let aliased = false;
  Y.visit(doc, {
    Alias: () => {
      aliased = true;
      return Y.visit.BREAK;
    },
  });
  return { ok: true, value, locator: () => locate, aliased };
}

/** For the rare case the fast path cannot locate: parse the document once. */
function documentLocator(text: string): Locate {
  const Y = yaml();
  const lineCounter = new Y.LineCounter();
  const doc = Y.parseDocument(text, { merge: true, prettyErrors: false, lineCounter });
  return nodeLocator(doc, lineCounter);
}

function nodeLocator(doc: YamlLib.Document, lineCounter: YamlLib.LineCounter): Locate {
  const Y = yaml();
  const pos = (offset: number | undefined): Position | null => {
    if (offset === undefined) return null;
    const lp = lineCounter.linePos(offset);
    return lp.line > 0 ? { line: lp.line, column: lp.col } : null;
  };
  const rootPos = pos((doc.contents as YamlLib.Node | null)?.range?.[0]) ?? FIRST_LINE;
  return (path: Path) => {
    let node: unknown = doc.contents;
    let at = rootPos;
    for (const seg of path) {
      if (Y.isAlias(node)) node = node.resolve(doc);
      if (Y.isMap(node)) {
        const pair = node.items.find((p) => {
          const k = Y.isScalar(p.key) ? p.key.value : p.key;
          return String(k) === String(seg);
        });
        if (!pair) break;
        at = pos((pair.key as YamlLib.Node | null)?.range?.[0]) ?? at;
        node = pair.value;
      } else if (Y.isSeq(node)) {
        const item = node.items[Number(seg)];
        if (item === undefined) break;
        at = pos((item as YamlLib.Node | null)?.range?.[0]) ?? at;
        node = item;
      } else {
        break;
      }
    }
    return at;
  };
}

/** The first key that is a map or a list, or text on more than one line: where, and why it is refused. */
export function badKey(Y: typeof YamlLib, doc: YamlLib.Document, text: string): { at: number; why: string } | null {
  let bad: { at: number; why: string } | null = null;
  Y.visit(doc, {
    Pair(_, pair) {
      const key = pair.key;
      if (Y.isCollection(key)) {
        bad = { at: key.range?.[0] ?? 0, why: "a key is a map or a list (a `?` key, or a flow map or list before a colon): keys are names" };
      } else if (Y.isScalar(key) && key.range && /[\r\n]/.test(text.slice(key.range[0], key.range[1]))) {
        bad = { at: key.range?.[0] ?? 0, why: "a key spans more than one line (a quote left open before it?): keys are names, on one line" };
      } else {
        return undefined;
      }
      return Y.visit.BREAK;
    },
  });
  return bad;
}

function firstLine(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg.split("\n")[0]!;
}
