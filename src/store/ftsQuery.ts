/**
 * Turns the `q` text of a log search into an FTS5 query that cannot be a
 * syntax error: each whitespace-separated word, or each "double-quoted
 * phrase", becomes one quoted FTS5 phrase, and all must match (AND).
 * A trailing `*` keeps prefix search (`conn*`). Punctuation inside a word
 * is left to the tokenizer, so `foo-bar` matches the adjacent tokens foo bar.
 * Returns null when the text holds nothing searchable.
 */
export function toFtsQuery(q: string): string | null {
  // FTS5 reads a query up to a NUL ("unterminated string"); stored lines never hold one (NUL becomes U+FFFD).
  if (q.includes("\0")) q = q.replaceAll("\0", " ");
  const parts: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (let m = re.exec(q); m !== null; m = re.exec(q)) {
    let text = m[1] ?? m[2] ?? "";
    let prefix = false;
    if (m[2] !== undefined && text.endsWith("*")) {
      text = text.replace(/\*+$/, "");
      prefix = true;
    }
    if (!/[\p{L}\p{N}]/u.test(text)) continue; // nothing the tokenizer would index
    parts.push(`"${text.replace(/"/g, '""')}"${prefix ? "*" : ""}`);
  }
  return parts.length ? parts.join(" AND ") : null;
}
