import { readFileSync, statSync } from "node:fs";
import type { BearerToken } from "../../config/types.js";

/** A token of the file, with its line (for messages that must name the line, never the token nor its role). */
export type FileToken = BearerToken & { line: number };
export type TokenFileResult = { ok: true; tokens: FileToken[]; warnings: string[] } | { ok: false; error: string };

/** Visible ASCII an Authorization header carries as is (RFC 7230 tchar plus RFC 6750's `/` and `=`). */
const TOKEN = /^[A-Za-z0-9!#$%&'*+\-.^_`|~/=]+$/;
const ROLE = /^[A-Za-z0-9_.:-]+$/;
/** What `Sec-WebSocket-Protocol: bearer.<token>` can carry (RFC 7230 tchar: no `/` nor `=`). */
const SUBPROTOCOL = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;

/**
 * `auth.bearer.token_file` (CONTRACT §5): one `<token>` or `<token> <role>`
 * per line, blank lines and `#` comments ignored, role `admin` by default.
 * A missing, unreadable or empty file, or a line that is neither form, is an
 * error naming the file (and line), never the token.
 */
export function readTokenFile(path: string): TokenFileResult {
  let text: string;
  try {
    if (!statSync(path).isFile()) return { ok: false, error: `auth.bearer.token_file: ${path} is not a file` };
    text = readFileSync(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "does not exist" : `cannot be read (${code ?? "error"})`;
    return { ok: false, error: `auth.bearer.token_file: ${path} ${why}` };
  }
  const parsed = parseTokenFile(text, path);
  if (!parsed.ok) return parsed;
  const warnings = [...parsed.warnings];
  const mode = modeOf(path);
  if (mode !== null && (mode & 0o077) !== 0) {
    warnings.push(`auth.bearer.token_file: ${path} is readable by other users (mode ${mode.toString(8).padStart(4, "0")}); chmod 600 it`);
  }
  return { ok: true, tokens: parsed.tokens, warnings };
}

export function parseTokenFile(text: string, path: string): TokenFileResult {
  const tokens: FileToken[] = [];
  const warnings: string[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "" || line.startsWith("#")) continue;
    const fields = line.split(/\s+/);
    const where = `auth.bearer.token_file: ${path}:${i + 1}`;
    if (fields.length > 2) return { ok: false, error: `${where}: expected "<token>" or "<token> <role>", found ${fields.length} fields` };
    const [token, role = "admin"] = fields as [string, string?];
    if (!TOKEN.test(token)) {
      return { ok: false, error: `${where}: the token has characters an Authorization header cannot carry (use letters, digits and -._~; e.g. openssl rand -hex 32)` };
    }
    // Not quoted: a line written the wrong way round has its token in the role's place.
    if (!ROLE.test(role)) return { ok: false, error: `${where}: the second field is not a role name (a line is "<token>" or "<token> <role>", the token first)` };
    tokens.push({ token, role, line: i + 1 });
    if (!SUBPROTOCOL.test(token)) {
      warnings.push(
        `${where}: the token has "/" or "=", which a WebSocket subprotocol cannot carry: the dashboard cannot follow logs with it (the API takes it); a token of letters, digits and -._~ can (openssl rand -hex 32)`,
      );
    }
  }
  if (tokens.length === 0) return { ok: false, error: `auth.bearer.token_file: ${path} contains no token (one token per line, optionally followed by a role)` };
  return { ok: true, tokens, warnings };
}

function modeOf(path: string): number | null {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return null;
  }
}
