/**
 * A fast parser for the block-style YAML subset that config files are written
 * in, recording key positions on request.
 *
 * Why: the `yaml` package alone takes most of the 300 ms budget of
 * `svc validate` at 1,000 jobs; this parser does the common shapes (block maps
 * and sequences, compact `- key: v` items, plain/quoted scalars, one-line flow
 * collections, `|` and `>` block scalars) one to two orders of magnitude
 * faster. Figures, and why not js-yaml: src/config/README.md and
 * docs/PERFORMANCE.md ("Config loading and `svc validate`").
 *
 * Invariant: it either returns exactly what `yaml.parse(text, {merge: true})`
 * returns (YAML 1.2 core schema), or it returns null and the caller falls
 * back to the `yaml` package, which also reports errors. package.json pins
 * `yaml` to the exact version this is proven against. Anything unusual
 * (anchors, tags, multi-line plain or quoted scalars, tabs, duplicate keys,
 * document markers other than a leading `---`, non-string keys, ...) bails. fastYaml.test.ts checks the
 * invariant against `yaml` with generated documents.
 */

/** Key positions: for each map or sequence, key (or index) -> packed line/column. */
export type PositionIndex = WeakMap<object, Map<string, number>>;

export interface FastParse {
  value: unknown;
  positions: PositionIndex;
}

const COL_BITS = 1_048_576; // 2^20

export function packPos(line: number, column: number): number {
  return line * COL_BITS + Math.min(column, COL_BITS - 1);
}

export function unpackPos(p: number): { line: number; column: number } {
  return { line: Math.floor(p / COL_BITS), column: p % COL_BITS };
}

/** Thrown inside the parser when the input leaves the supported subset. */
class Bail extends Error {}

// Characters the fast path never handles: tabs, control characters, BOM and
// Unicode line separators. Document markers and directives at column 0.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSUPPORTED_CHAR = /[\t\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufeff\u2028\u2029]/;

function hasDocumentMarkers(src: string): boolean {
  if (src.startsWith("---") || src.startsWith("...") || src.startsWith("%")) return true;
  return src.includes("\n---") || src.includes("\n...") || src.includes("\n%");
}

/** A `---` line before any content (a common way to start a YAML file) is blanked, keeping line numbers. */
const LEADING_DOC_START = /^((?:[ ]*(?:#[^\n]*)?\n)*)---[ ]*(?:#[^\n]*)?(?=\n|$)/;

/**
 * Parses `text`, or returns null when it is outside the subset. With
 * `withPositions` false (the fast path for valid files) no positions are
 * recorded: the caller parses again with positions only when it has issues
 * to report.
 */
export function fastParse(text: string, withPositions = false): FastParse | null {
  let src = text;
  if (src.includes("\r")) src = src.replace(/\r\n/g, "\n");
  if (src.startsWith("---") || src.includes("\n---")) src = src.replace(LEADING_DOC_START, "$1");
  if (src.includes("\r") || UNSUPPORTED_CHAR.test(src) || hasDocumentMarkers(src)) return null;
  try {
    return new FastParser(src, withPositions).parseDocument();
  } catch (e) {
    if (e instanceof Bail) return null;
    throw e;
  }
}

const SPACE = 32;
const HASH = 35;
const DASH = 45;
const COLON = 58;

function bail(): never {
  throw new Bail();
}

class FastParser {
  private readonly lines: string[];
  /** Indentation of each line, or -1 for blank and comment-only lines. */
  private readonly ind: Int32Array;
  private i = 0;
  /** Where the key read by readKey ends (after its colon). */
  private keyEnd = 0;
  private readonly cursor = new Cursor();
  /** Whether the text ends with a line break (a block scalar running to the end needs one). */
  private readonly endsWithBreak: boolean;
  readonly positions: PositionIndex = new WeakMap();

  constructor(
    src: string,
    private readonly withPositions: boolean,
  ) {
    const lines = src.split("\n");
    // The final line break ends the last line; it does not start an empty one.
    if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
    this.lines = lines;
    this.ind = new Int32Array(lines.length);
    for (let k = 0; k < lines.length; k++) {
      const line = lines[k]!;
      let n = 0;
      while (line.charCodeAt(n) === SPACE) n++;
      this.ind[k] = n === line.length || line.charCodeAt(n) === HASH ? -1 : n;
    }
    this.endsWithBreak = src.endsWith("\n");
  }

  parseDocument(): FastParse {
    const value = this.parseBlockNode(-1, false);
    this.skipBlank();
    if (this.i < this.lines.length) bail();
    return { value, positions: this.positions };
  }

  private skipBlank(): void {
    while (this.i < this.lines.length && this.ind[this.i] === -1) this.i++;
  }

  /** A nested block node below a parent at `parent` indentation, or null when there is none. */
  private parseBlockNode(parent: number, seqAtParent: boolean): unknown {
    this.skipBlank();
    if (this.i >= this.lines.length) return null;
    const n = this.ind[this.i]!;
    const line = this.lines[this.i]!;
    const isItem = line.charCodeAt(n) === DASH && (n + 1 === line.length || line.charCodeAt(n + 1) === SPACE);
    if (n > parent) return isItem ? this.parseSeq(n) : this.parseMap(n);
    if (n === parent && seqAtParent && isItem) return this.parseSeq(n);
    return null;
  }

  private parseMap(m: number): Record<string, unknown> {
    const obj: Record<string, unknown> = {};
    const pos = this.withPositions ? new Map<string, number>() : null;
    if (pos) this.positions.set(obj, pos);
    for (;;) {
      this.skipBlank();
      if (this.i >= this.lines.length) break;
      const n = this.ind[this.i]!;
      if (n < m) break;
      if (n > m) bail();
      const line = this.lines[this.i]!;
      const key = this.readKey(line, n);
      if (key === null) bail();
      // A duplicate key: `yaml` reports it with its position.
      if (Object.prototype.hasOwnProperty.call(obj, key)) bail();
      pos?.set(key, packPos(this.i + 1, n + 1));
      obj[key] = this.parseValue(line, skipSpaces(line, this.keyEnd), m, true);
    }
    return obj;
  }

  private parseSeq(s: number): unknown[] {
    const arr: unknown[] = [];
    const pos = this.withPositions ? new Map<string, number>() : null;
    if (pos) this.positions.set(arr, pos);
    for (;;) {
      this.skipBlank();
      if (this.i >= this.lines.length) break;
      const n = this.ind[this.i]!;
      if (n < s) break;
      if (n > s) bail();
      const line = this.lines[this.i]!;
      if (line.charCodeAt(n) !== DASH || (n + 1 < line.length && line.charCodeAt(n + 1) !== SPACE)) break;
      pos?.set(String(arr.length), packPos(this.i + 1, n + 1));
      const p = skipSpaces(line, n + 1);
      if (p < line.length && line.charCodeAt(p) !== HASH) {
        const c = line.charCodeAt(p);
        if (c === DASH && (p + 1 === line.length || line.charCodeAt(p + 1) === SPACE)) {
          this.ind[this.i] = p; // `- - x`: the rest of the line is a nested sequence item
          arr.push(this.parseSeq(p));
          continue;
        }
        if (this.readKey(line, p) !== null) {
          this.ind[this.i] = p; // `- key: v`: a compact map starting at column p
          arr.push(this.parseMap(p));
          continue;
        }
      }
      arr.push(this.parseValue(line, p, s, false));
    }
    return arr;
  }

  /**
   * The value after a map key's colon or a sequence dash at column `p` of the
   * current line; advances past every line it consumes.
   */
  private parseValue(line: string, p: number, parent: number, inMap: boolean): unknown {
    if (p >= line.length || line.charCodeAt(p) === HASH) {
      this.i++;
      return this.parseBlockNode(parent, inMap);
    }
    const c = line[p]!;
    const cur = this.cursor;
    let value: unknown;
    if (c === "|" || c === ">") {
      return this.parseBlockScalar(line, p, parent);
    } else if (c === '"') {
      value = cur.doubleQuoted(line, p);
    } else if (c === "'") {
      value = cur.singleQuoted(line, p);
    } else if (c === "[" || c === "{") {
      const flow = new FlowParser(line, this.i + 1, this.withPositions ? this.positions : null, cur);
      value = flow.value(p);
      cur.end = flow.p;
    } else {
      value = cur.plain(line, p);
    }
    checkLineEnd(line, cur.end);
    this.i++;
    // More-indented lines after an inline value continue it (or are errors): not our subset.
    this.skipBlank();
    if (this.i < this.lines.length && this.ind[this.i]! > parent) bail();
    return value;
  }

  private parseBlockScalar(line: string, p: number, parent: number): string {
    const folded = line[p] === ">";
    let q = p + 1;
    let chomp: "clip" | "strip" | "keep" = "clip";
    if (line[q] === "-") {
      chomp = "strip";
      q++;
    } else if (line[q] === "+") {
      chomp = "keep";
      q++;
    }
    const afterHeader = skipSpaces(line, q);
    if (afterHeader < line.length && (afterHeader === q || line.charCodeAt(afterHeader) !== HASH)) bail();

    const parts: string[] = [];
    let contentIndent = -1;
    let j = this.i + 1;
    for (; j < this.lines.length; j++) {
      const raw = this.lines[j]!;
      let lead = 0;
      while (raw.charCodeAt(lead) === SPACE) lead++;
      if (lead === raw.length) {
        // An empty line: leading ones and whitespace-only content are not our subset.
        if (contentIndent === -1 || raw.length > contentIndent) bail();
        parts.push("");
        continue;
      }
      if (contentIndent === -1) {
        if (lead <= parent) bail(); // empty block scalar
        contentIndent = lead;
      }
      if (lead < contentIndent) break;
      if (folded && lead > contentIndent) bail(); // more-indented folded lines keep their breaks
      parts.push(raw.slice(contentIndent));
    }
    if (contentIndent === -1) bail();
    if (j === this.lines.length && !this.endsWithBreak) bail();
    let trailing = 0;
    while (parts.length > 0 && parts[parts.length - 1] === "") {
      parts.pop();
      trailing++;
    }
    this.i = j;
    let body: string;
    if (folded) {
      body = "";
      let empties = 0;
      for (let k = 0; k < parts.length; k++) {
        const part = parts[k]!;
        if (part === "") {
          empties++;
          continue;
        }
        if (k > 0) body += empties > 0 ? "\n".repeat(empties) : " ";
        empties = 0;
        body += part;
      }
    } else {
      body = parts.join("\n");
    }
    if (chomp === "strip") return body;
    if (chomp === "clip") return body + "\n";
    return body + "\n" + "\n".repeat(trailing);
  }

  /** A block map key at column n: `key:` or `"key":` followed by a space or the line end. */
  private readKey(line: string, n: number): string | null {
    const c = line[n]!;
    let key: string;
    let colon: number;
    if (c === '"' || c === "'") {
      try {
        key = c === '"' ? this.cursor.doubleQuoted(line, n) : this.cursor.singleQuoted(line, n);
      } catch (e) {
        if (e instanceof Bail) return null;
        throw e;
      }
      colon = this.cursor.end;
      if (line.charCodeAt(colon) !== COLON) return null;
    } else {
      if (INDICATORS.includes(c)) return null;
      // The key ends at the first ": " (or a ":" ending the line), unless a comment starts first.
      colon = line.indexOf(": ", n);
      if (colon === -1) {
        if (line.charCodeAt(line.length - 1) !== COLON) return null;
        colon = line.length - 1;
      }
      const hash = line.indexOf(" #", n);
      if (hash !== -1 && hash < colon) return null;
      key = line.slice(n, colon).trimEnd();
      if (key === "" || typeof resolvePlain(key) !== "string") bail();
    }
    if (colon + 1 < line.length && line.charCodeAt(colon + 1) !== SPACE) return null;
    if (key === "__proto__" || key === "<<") bail();
    this.keyEnd = colon + 1;
    return key;
  }
}

/** Characters that cannot start a plain scalar (or that we leave to `yaml`). */
const INDICATORS = "-?:,[]{}#&*!|>'\"%@`";

function skipSpaces(line: string, p: number): number {
  while (line.charCodeAt(p) === SPACE) p++;
  return p;
}

/** After a scalar or flow collection: only spaces and a comment may follow. */
function checkLineEnd(line: string, end: number): void {
  const q = skipSpaces(line, end);
  if (q === line.length) return;
  if (q > end && line.charCodeAt(q) === HASH) return;
  bail();
}

const ESCAPES: Record<string, string> = {
  "0": "\0",
  a: "\x07",
  b: "\b",
  t: "\t",
  n: "\n",
  v: "\v",
  f: "\f",
  r: "\r",
  e: "\x1b",
  " ": " ",
  '"': '"',
  "/": "/",
  "\\": "\\",
  N: "\x85",
  _: "\xa0",
  L: "\u2028",
  P: "\u2029",
};
const HEX_LEN: Record<string, number> = { x: 2, u: 4, U: 8 };

/**
 * Scalar readers. Each returns the value and leaves `end` just after the
 * scalar, so that no [value, end] pair is allocated per scalar.
 */
class Cursor {
  end = 0;

  plain(line: string, p: number): unknown {
    const c = line[p]!;
    if (c !== "-" && INDICATORS.includes(c)) bail();
    if (c === "-" && (p + 1 === line.length || line.charCodeAt(p + 1) === SPACE)) bail();
    let end = line.length;
    const hash = line.indexOf(" #", p);
    if (hash !== -1) end = hash;
    const text = line.slice(p, end).trimEnd();
    if (text.includes(": ") || text.endsWith(":")) bail();
    this.end = end;
    return resolvePlain(text);
  }

  /** `"..."` on one line. */
  doubleQuoted(line: string, p: number): string {
    let out = "";
    let k = p + 1;
    let start = k;
    for (;;) {
      if (k >= line.length) bail(); // multi-line quoted scalars are not our subset
      const ch = line[k]!;
      if (ch === '"') {
        this.end = k + 1;
        return out + line.slice(start, k);
      }
      if (ch !== "\\") {
        k++;
        continue;
      }
      out += line.slice(start, k);
      const e = line[k + 1];
      if (e === undefined) bail();
      const simple = ESCAPES[e];
      if (simple !== undefined) {
        out += simple;
        k += 2;
      } else {
        const len = HEX_LEN[e];
        if (len === undefined) bail();
        const hex = line.slice(k + 2, k + 2 + len);
        if (hex.length !== len || !/^[0-9a-fA-F]+$/.test(hex)) bail();
        const code = parseInt(hex, 16);
        if (code > 0x10ffff) bail();
        out += String.fromCodePoint(code);
        k += 2 + len;
      }
      start = k;
    }
  }

  /** `'...'` on one line, `''` being a quote. */
  singleQuoted(line: string, p: number): string {
    let out = "";
    let k = p + 1;
    for (;;) {
      const q = line.indexOf("'", k);
      if (q === -1) bail();
      out += line.slice(k, q);
      if (line[q + 1] === "'") {
        out += "'";
        k = q + 2;
        continue;
      }
      this.end = q + 1;
      return out;
    }
  }
}

/** YAML 1.2 core schema resolution of a plain scalar, exactly as the `yaml` package does it. */
export function resolvePlain(s: string): unknown {
  const c = s.charCodeAt(0);
  // Fast exit: anything not starting like a number, null or bool is a string.
  const maybeSpecial =
    s === "" ||
    (c >= 48 && c <= 57) ||
    c === 43 || // +
    c === 45 || // -
    c === 46 || // .
    c === 126 || // ~
    c === 110 || // n
    c === 78 || // N
    c === 116 || // t
    c === 84 || // T
    c === 102 || // f
    c === 70; // F
  if (!maybeSpecial) return s;
  if (s.length > 5 && (c < 48 || c > 57) && c !== 43 && c !== 45 && c !== 46) return s; // longer than any word below
  if (s === "" || s === "~" || s === "null" || s === "Null" || s === "NULL") return null;
  if (s === "true" || s === "True" || s === "TRUE") return true;
  if (s === "false" || s === "False" || s === "FALSE") return false;
  if (c !== 43 && c !== 45 && c !== 46 && (c < 48 || c > 57)) return s; // n/t/f/~ words handled above
  // Numbers end in a digit, a hex digit, "." (`1.`) or n/N/f/F (.nan, .inf): `30s`, `1h` are strings.
  const last = s.charCodeAt(s.length - 1);
  const numberEnd =
    (last >= 48 && last <= 57) || (last >= 97 && last <= 102) || (last >= 65 && last <= 70) || last === 46 || last === 110 || last === 78;
  if (!numberEnd) return s;
  if (/^0o[0-7]+$/.test(s)) return parseInt(s.slice(2), 8);
  if (/^[-+]?[0-9]+$/.test(s)) return parseInt(s, 10);
  if (/^0x[0-9a-fA-F]+$/.test(s)) return parseInt(s.slice(2), 16);
  if (/^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/.test(s)) {
    return s.slice(-3).toLowerCase() === "nan" ? NaN : s[0] === "-" ? -Infinity : Infinity;
  }
  if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/.test(s)) return parseFloat(s);
  if (/^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/.test(s)) return parseFloat(s);
  return s;
}

/** One-line flow collections: `[a, "b"]`, `{k: v, k2: [1, 2]}`. */
class FlowParser {
  p = 0;

  constructor(
    private readonly line: string,
    private readonly lineNo: number,
    private readonly positions: PositionIndex | null,
    private readonly cursor: Cursor,
  ) {}

  value(p: number): unknown {
    this.p = skipSpaces(this.line, p);
    const c = this.line[this.p];
    if (c === "[") return this.seq();
    if (c === "{") return this.map();
    if (c === '"' || c === "'") {
      const v = c === '"' ? this.cursor.doubleQuoted(this.line, this.p) : this.cursor.singleQuoted(this.line, this.p);
      this.p = this.cursor.end;
      return v;
    }
    return resolvePlain(this.plain());
  }

  private plain(): string {
    const line = this.line;
    const start = this.p;
    const c = line[start];
    if (c === undefined) bail();
    if (INDICATORS.includes(c)) {
      // `-` may start a plain scalar (`-1`, `-x`) when a non-separator follows.
      const nx = line[start + 1];
      if (c !== "-" || nx === undefined || " ,]}[{".includes(nx)) bail();
    }
    let k = start;
    for (; k < line.length; k++) {
      const ch = line[k]!;
      if (ch === "," || ch === "]" || ch === "}") break;
      if (ch === "[" || ch === "{") bail();
      if (ch === ":") {
        const nx = line[k + 1];
        if (nx === undefined || nx === " " || nx === "," || nx === "]" || nx === "}") break;
      }
      if (ch === "#" && line[k - 1] === " ") bail();
    }
    this.p = k;
    return line.slice(start, k).trimEnd();
  }

  private seq(): unknown[] {
    const arr: unknown[] = [];
    const pos = this.positions ? new Map<string, number>() : null;
    if (pos) this.positions!.set(arr, pos);
    this.p++;
    for (;;) {
      this.p = skipSpaces(this.line, this.p);
      if (this.line[this.p] === "]") {
        this.p++;
        return arr;
      }
      pos?.set(String(arr.length), packPos(this.lineNo, this.p + 1));
      arr.push(this.value(this.p));
      this.p = skipSpaces(this.line, this.p);
      const c = this.line[this.p];
      if (c === ",") this.p++;
      else if (c === "]") {
        this.p++;
        return arr;
      } else bail();
    }
  }

  private map(): Record<string, unknown> {
    const obj: Record<string, unknown> = {};
    const pos = this.positions ? new Map<string, number>() : null;
    if (pos) this.positions!.set(obj, pos);
    this.p++;
    for (;;) {
      this.p = skipSpaces(this.line, this.p);
      if (this.line[this.p] === "}") {
        this.p++;
        return obj;
      }
      const keyAt = this.p;
      const c = this.line[this.p];
      let key: unknown;
      if (c === '"' || c === "'") {
        key = c === '"' ? this.cursor.doubleQuoted(this.line, this.p) : this.cursor.singleQuoted(this.line, this.p);
        this.p = this.cursor.end;
      } else {
        key = resolvePlain(this.plain());
      }
      if (typeof key !== "string" || key === "__proto__" || key === "<<") bail();
      if (Object.prototype.hasOwnProperty.call(obj, key)) bail();
      this.p = skipSpaces(this.line, this.p);
      if (this.line[this.p] !== ":") bail();
      this.p = skipSpaces(this.line, this.p + 1);
      const vc = this.line[this.p];
      if (vc === undefined || vc === "," || vc === "}") bail();
      pos?.set(key, packPos(this.lineNo, keyAt + 1));
      obj[key] = this.value(this.p);
      this.p = skipSpaces(this.line, this.p);
      const sep = this.line[this.p];
      if (sep === ",") this.p++;
      else if (sep === "}") {
        this.p++;
        return obj;
      } else bail();
    }
  }
}
