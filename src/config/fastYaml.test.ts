import { describe, expect, it } from "vitest";
import fc from "fast-check";
import YAML from "yaml";
import { fastParse, resolvePlain, unpackPos } from "./fastYaml.js";

/** What `yaml` makes of a text: its value, or "error" when it reports any error or warning. */
function reference(text: string): { value: unknown } | "error" {
  try {
    const doc = YAML.parseDocument(text, { merge: true, uniqueKeys: true, prettyErrors: false });
    if (doc.errors.length > 0 || doc.warnings.length > 0) return "error";
    return { value: doc.toJS({ maxAliasCount: 100 }) };
  } catch {
    return "error";
  }
}

/** The invariant: the fast path bails, or returns exactly what `yaml` returns. */
function agrees(text: string): boolean {
  const fast = fastParse(text);
  if (fast === null) return true;
  const ref = reference(text);
  expect(ref, `yaml rejects what the fast path accepted:\n${text}`).not.toBe("error");
  expect(fast.value, `different value for:\n${text}`).toEqual((ref as { value: unknown }).value);
  return true;
}

describe("fastParse", () => {
  const accepted = [
    "a: 1\nb: [x, 'y', \"z\\n\"]\nc:\n  - d: e\n    f: g\n  - - h\n    - i\n",
    "key:\n- a\n- b\nother: 1\n",
    "a  : b\n",
    "a: |\n  line1\n   line2\n\n  # not a comment\n\nk: >-\n  a\n  b\n\n  c\n",
    "a: |+\n  x\n\n",
    "- |\n x\n",
    "a: -1\nb: [-1, -x]\nc: +1\nd: 0o17\ne: 0x1F\nf: 1e3\ng: .inf\nh: -.INF\ni: .nan\nj: 1.50\n",
    "a: null\nb: ~\nc:\nd: Null\ne: true\nf: False\ng: yes\nh: 0230\n",
    "p: after:x\nq: ops-chat:#data\nr: a #c\ns: {a: b, c: [1, 2], d: http://x:80/y}\n",
    "a: 'it''s'\nb: \"\\u00e9\\x41\\ \\t\"\n",
    "\"quoted key\": 1\n'single': 2\n",
    "jobs:\n  x:\n    command: [\"node\", \"t.js\", \"{{ outputs.a.b }}\"]\n    env: {}\n    tags: []\n",
    "",
    "# only a comment\n",
    "a: 1 # trailing\n# between\nb: 2\n",
    "---\na: 1\n",
    "# header\n--- # start\njobs: {}\n",
  ];
  it.each(accepted)("accepts and agrees with yaml: %j", (text) => {
    expect(fastParse(text)).not.toBeNull();
    agrees(text);
  });

  const bailed = [
    "a: &x 1\nb: *x\n", // anchors
    "a: !tag x\n", // tags
    "a: b\n  c\n", // multi-line plain scalar
    "a: \"b\n  c\"\n", // multi-line quoted
    "a:\tb\n", // tab
    "a: 1\na: 2\n", // duplicate key
    "a: 1\n---\nb: 2\n", // a second document
    "--- {a: 1}\n", // content on the marker line
    "a: 1\n...\n", // document end marker
    "a: |2\n   x\n", // indentation indicator
    "a: b: c\n", // error
    "? a\n: b\n", // complex key
    "1: a\n", // non-string key
    "<<: {a: 1}\n", // merge key
    "a: [1,\n  2]\n", // multi-line flow
    "a: |\n  x", // block scalar at end without a line break
    "hello\n", // scalar document
  ];
  it.each(bailed)("leaves unusual input to yaml: %j", (text) => {
    expect(fastParse(text)).toBeNull();
  });

  it("property: plain scalars resolve exactly as yaml's core schema does", () => {
    const chars = "0123456789+-.eExXoOabcdfABCDFinfaNlLtTrusmhd~_ ".split("");
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...chars), { minLength: 1, maxLength: 7 }), (cs) => {
        const s = cs.join("").trim();
        if (s === "" || /^-( |$)/.test(s)) return true;
        const doc = YAML.parseDocument(`v: ${s}\n`);
        if (doc.errors.length > 0) return true;
        expect(resolvePlain(s)).toEqual((doc.toJS() as { v: unknown }).v);
        return true;
      }),
      { numRuns: 2000 },
    );
    for (const s of ["30s", "1h30m", "2d", "0x1F", "0o17", "1e3", "+.inf", ".NaN", "1.", "-0", "Null", "TRUE", "faLse", "0230"]) {
      expect(resolvePlain(s), s).toEqual((YAML.parse(`v: ${s}`) as { v: unknown }).v);
    }
  });

  it("records 1-based key positions on request", () => {
    const r = fastParse("jobs:\n  a:\n    tags: [x, y]\n  - bad\n", true);
    expect(r).toBeNull(); // invalid, so the caller falls back to yaml for errors
    const ok = fastParse("jobs:\n  a:\n    tags: [x, y]\n    list:\n      - k: v\n", true)!;
    const root = ok.value as { jobs: { a: { tags: string[]; list: object[] } } };
    const pos = (obj: object, key: string) => unpackPos(ok.positions.get(obj)!.get(key)!);
    expect(pos(root, "jobs")).toEqual({ line: 1, column: 1 });
    expect(pos(root.jobs, "a")).toEqual({ line: 2, column: 3 });
    expect(pos(root.jobs.a.tags, "1")).toEqual({ line: 3, column: 15 });
    expect(pos(root.jobs.a.list, "0")).toEqual({ line: 5, column: 7 });
    expect(pos(root.jobs.a.list[0]!, "k")).toEqual({ line: 5, column: 9 });
  });

  // Property tests: generated documents in the shapes config files use, plus
  // invalid variations. Whatever the fast path accepts must equal `yaml`.
  const KEYS = ["a", "job-1", "x.y", "b c", "é", "true", "null", "12", "-k", "k:", "a:b", "#k", "k #c", "'q'", '"d"', "__proto__", "<<", ""];
  const SCALARS = [
    "",
    " ",
    "x",
    "a b",
    "a #b",
    "a# b",
    "a: b",
    "a:b",
    "#x",
    "- x",
    "-x",
    "-",
    "0230",
    "1e3",
    "1_000",
    ".inf",
    "~",
    "null",
    "NULL",
    "yes",
    "True",
    "0o17",
    "0x1F",
    "+1",
    "-0",
    "1.",
    "|",
    ">",
    "'",
    '"',
    "\\",
    "a\\nb",
    "multi\nline",
    "trail ",
    "http://x:1/y?q=a#frag",
    "after:extract",
    "[x]",
    "{a}",
    "*a",
    "&a",
    "!t",
    "%",
    "@",
    "`",
    "é ü",
    "${env:X}",
    "{{ outputs.a.b }}",
  ];
  const scalar = fc.oneof(
    fc.constantFrom(...SCALARS),
    fc.integer({ min: -1000, max: 100_000 }),
    fc.double({ noNaN: false }),
    fc.boolean(),
    fc.constant(null),
    fc.string({ maxLength: 8 }),
  );
  const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, tie("list"), tie("map")),
    list: fc.array(tie("node"), { maxLength: 4 }),
    map: fc.dictionary(fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 6 })), tie("node"), { maxKeys: 4 }),
  })).node;

  it("property: agrees with yaml on documents yaml itself writes", () => {
    const options = fc.record({
      indent: fc.constantFrom(2, 4),
      flow: fc.boolean(),
      single: fc.boolean(),
      compact: fc.boolean(),
    });
    let accepted = 0;
    let total = 0;
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 5 }), options, (doc, o) => {
        const text = YAML.stringify(doc, {
          indent: o.indent,
          singleQuote: o.single,
          indentSeq: !o.compact,
          collectionStyle: o.flow ? "flow" : "any",
          lineWidth: 0,
        });
        if (!o.flow) {
          total++; // root flow documents are left to yaml by design
          if (fastParse(text) !== null) accepted++;
        }
        return agrees(text);
      }),
      // Enough documents that the acceptance rate below is not a coin toss (about 1,000 block documents).
      { numRuns: 2_000 },
    );
    // The fast path must carry real documents, not bail on everything.
    expect(accepted / total).toBeGreaterThan(0.25);
  });

  const fragment = fc.constantFrom(
    "a: 1",
    "  b: x",
    "- c",
    "  - d: e",
    "    f: g",
    "k: |",
    "  lit",
    "k: >-",
    "  fold",
    "",
    "# c",
    "x: [1, 'a', \"b\"]",
    "y: {p: q, r: [s]}",
    "z:",
    "    deep: 1",
    "-",
    "- - n",
    "  q: 'it''s'",
    "w: \"esc\\t\\u00e9\"",
    "v: a #c",
    "u: a:b",
    "t: 'x' y",
    "s: [a,",
    "r: }",
    "   odd: 3",
    "---",
    "--- # doc",
    "...",
  );

  it("property: agrees with yaml on arbitrary line soups", () => {
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 12 }), fc.boolean(), (lines, finalBreak) =>
        agrees(lines.join("\n") + (finalBreak ? "\n" : "")),
      ),
      { numRuns: 1500 },
    );
  });

  it("property: agrees with yaml on truncated and mutated documents", () => {
    const base = accepted.join("");
    fc.assert(
      fc.property(
        fc.nat(base.length),
        fc.nat(base.length),
        fc.constantFrom("", " ", "\n", ":", "-", "#", "'", '"', "[", "{", "|", "x", "  "),
        (cut, at, insert) => {
          const truncated = base.slice(0, cut);
          const mutated = base.slice(0, at) + insert + base.slice(at);
          return agrees(truncated) && agrees(mutated);
        },
      ),
      { numRuns: 800 },
    );
  });
});
