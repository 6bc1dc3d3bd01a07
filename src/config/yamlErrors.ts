/**
 * The `yaml` package's error messages, without the document's text.
 *
 * Some of its messages quote the text of the token they stumbled on
 * (`Unexpected scalar token in YAML stream: "s3cr3t"`, `Block scalar header
 * includes extra characters: |s3cr3t`, `Invalid escape sequence \q`). That
 * token may be a secret: a typo above an `env:` block makes every later value
 * unexpected. These messages go to the config views, the daemon's log and the
 * reload answers, which must never show a secret (SECURITY.md), so every
 * message is cut to the library's own words; the line and column (reported
 * beside it) say where to look.
 */

/** The messages that name a token of the document without a colon before it, with what is kept of each. */
const QUOTING: ReadonlyArray<[RegExp, string]> = [
  [/^Plain value cannot start with .*/, "Plain value cannot start with this character"],
  [/^Invalid escape sequence.*/, "Invalid escape sequence"],
  [/^Unknown directive.*/, "Unknown directive"],
  [/^Unsupported YAML version.*/, "Unsupported YAML version"],
  [/^Unresolved plain scalar.*/, "Unresolved plain scalar"],
  [/^The .* tag has no suffix.*/, "A tag has no suffix"],
  [/^Verbatim tags aren't resolved.*/, "Verbatim tags aren't resolved"],
  [/^Anchors and tags must be after the .* indicator.*/, "Anchors and tags must be after the indicator"],
];

/** `Unexpected X in Y`: X is punctuation (kept) or an anchor or tag of the document (not). */
const UNEXPECTED_IN = /^Unexpected (.+) in (flow map|flow sequence|flow collection|collection|block map|block sequence)$/;

export function yamlProblem(message: string): string {
  // prettyErrors is off, but keep to one line whatever the library does.
  let m = message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
  // What follows a colon is what the library found there (a token's text, a tag, a key).
  const colon = m.indexOf(": ");
  if (colon >= 0) m = m.slice(0, colon);
  for (const [pattern, kept] of QUOTING) if (pattern.test(m)) return kept;
  const unexpected = UNEXPECTED_IN.exec(m);
  if (unexpected && !/^[,:?[\]{}-]$/.test(unexpected[1]!)) return `Unexpected anchor or tag in ${unexpected[2]}`;
  // Anything quoted is the document's.
  return m.replace(/"[^"]*"|'[^']*'|`[^`]*`/g, "").replace(/\s+/g, " ").trim();
}
