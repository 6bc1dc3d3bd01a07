/**
 * svcd.yaml as raw text for `GET /api/config/daemon`, line for line, with
 * secret values replaced by "***" (CONTRACT §4): `token`, `password`,
 * `password_hash`, `client_secret`, every `${env:...}` value, and the values
 * of `global_env` (job environments are secret everywhere). Commented-out
 * secrets are redacted too. The line count never changes.
 */

const SECRET_KEYS = new Set(["token", "password", "password_hash", "client_secret"]);
const SECRET_MAPS = new Set(["global_env", "env"]);
const MASK = '"***"';

/** `key: value` in block style, after optional `- ` item markers. */
const BLOCK_PAIR = /^(\s*(?:-\s+)*)(["']?)(?!-\s)([^\s"'#:{}[\],][^"':{}[\]]*?)\2(\s*:)(\s+|$)(.*)$/;
/** `key: value` inside a flow map. */
const FLOW_PAIR = /([{,]\s*)(["']?)([A-Za-z_][\w.-]*)\2(\s*:\s*)("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,}\]]*)/g;

export function redactDaemonText(text: string): string {
  const lines = text.split("\n");
  const stack: { indent: number; key: string }[] = [];
  let blockScalarIndent = -1; // > -1 while skipping the body of a redacted block scalar
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const indent = line.length - line.trimStart().length;
    if (blockScalarIndent >= 0) {
      if (line.trim() === "" || indent > blockScalarIndent) {
        lines[i] = line.trim() === "" ? line : " ".repeat(indent) + "***";
        continue;
      }
      blockScalarIndent = -1;
    }
    const comment = /^(\s*#\s?)(.*)$/.exec(line);
    if (comment) {
      lines[i] = comment[1]! + redactPair(comment[2]!, false).text;
      continue;
    }
    const m = BLOCK_PAIR.exec(line);
    if (!m) {
      // `- {username: a, password_hash: ...}`: a flow map as a list item.
      const item = /^(\s*(?:-\s+)+)(\{.*)$/.exec(line);
      if (item) lines[i] = item[1]! + redactFlow(item[2]!, false);
      continue;
    }
    const keyIndent = m[1]!.length;
    while (stack.length > 0 && stack[stack.length - 1]!.indent >= keyIndent) stack.pop();
    const parent = stack[stack.length - 1]?.key ?? "";
    const r = redactPair(line, SECRET_MAPS.has(parent));
    lines[i] = r.text;
    if (r.blockScalar) blockScalarIndent = keyIndent;
    const { value } = splitComment(m[6]!);
    if (value === "") stack.push({ indent: keyIndent, key: m[3]! });
  }
  return lines.join("\n");
}

function redactPair(line: string, parentIsSecretMap: boolean): { text: string; blockScalar: boolean } {
  const m = BLOCK_PAIR.exec(line);
  if (!m) return { text: line, blockScalar: false };
  const [, lead, quote, key, colon, space, rest] = m as unknown as [string, string, string, string, string, string, string];
  const { value, comment } = splitComment(rest);
  if (value.startsWith("{") || value.startsWith("[")) {
    return { text: `${lead}${quote}${key}${quote}${colon}${space}${redactFlow(value, SECRET_MAPS.has(key))}${comment}`, blockScalar: false };
  }
  if (value === "") return { text: line, blockScalar: false };
  const secret = SECRET_KEYS.has(key) || parentIsSecretMap || value.includes("${env:");
  if (!secret) return { text: line, blockScalar: false };
  const blockScalar = /^[|>][-+0-9]*$/.test(value);
  return { text: `${lead}${quote}${key}${quote}${colon}${space}${MASK}${comment}`, blockScalar };
}

function redactFlow(value: string, allSecret: boolean): string {
  return value.replace(FLOW_PAIR, (whole, pre: string, q: string, key: string, sep: string, v: string) => {
    const trimmed = v.trim();
    if (trimmed.startsWith("{") || trimmed.startsWith("[")) return whole;
    if (allSecret || SECRET_KEYS.has(key) || v.includes("${env:")) {
      return `${pre}${q}${key}${q}${sep}${MASK}${v.endsWith(" ") ? " " : ""}`;
    }
    return whole;
  });
}

/** Splits a value from a trailing ` # comment` (outside quotes). */
function splitComment(rest: string): { value: string; comment: string } {
  let quote: string | null = null;
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"') i++;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === "#" && (i === 0 || rest[i - 1] === " ")) {
      const start = rest.slice(0, i).trimEnd().length;
      return { value: rest.slice(0, start), comment: rest.slice(start) };
    }
  }
  return { value: rest.trimEnd(), comment: rest.slice(rest.trimEnd().length) };
}
