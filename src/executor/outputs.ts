/**
 * Output capture (CONTRACT §3): turns a run's stdout lines into the values of
 * its `output:` variables, keeping only what the modes need, so memory stays
 * bounded (a few lines and one JSON object) whatever the job prints.
 *
 * Choices:
 * - "Empty" means empty or whitespace-only. `last_line` is the last non-empty
 *   line (trailing empty lines are skipped); `first_line` is the first
 *   non-empty line (leading empty lines are skipped). Values are not trimmed.
 * - `json_field:<key>` looks in the last line that parses as a JSON object
 *   (arrays, numbers, strings and invalid lines are ignored; a line must fit
 *   in one captured line, 64 KiB). The key is first tried as a literal
 *   top-level key, then as a dotted path (`a.b.0.c`; numeric segments index
 *   arrays). Strings are taken as they are; other values are JSON text
 *   (`42`, `true`, `null`, `{"x":1}`). A missing key stores nothing, even if an
 *   earlier JSON line had it.
 * - `regex:<pattern>` is matched line by line (lines have no `\n`; `^`/`$`
 *   anchor to a line) and the first line that matches decides; no flags. Per
 *   line keeps memory bounded for 100 MB of output; a pattern that needs to
 *   span lines never matches. The value is capture group 1, or the whole
 *   match when the pattern has no group; a group that did not take part gives "".
 * - `exit_code` is the exit code as decimal text; absent when a signal ended
 *   the process (code null).
 */
import type { OutputMode } from "../config/types.js";
import type { OutputCapture } from "./types.js";

/** Why an output mode cannot be used (an invalid regex), or null when it is fine. */
export function checkOutputMode(mode: OutputMode): string | null {
  if (mode.kind === "json_field" && mode.key === "") return "json_field needs a key";
  if (mode.kind !== "regex") return null;
  try {
    new RegExp(mode.pattern);
    return null;
  } catch (e: unknown) {
    return `invalid regex ${JSON.stringify(mode.pattern)}: ${(e as Error).message}`;
  }
}

const isBlank = (line: string): boolean => line.trim() === "";

/**
 * Throws when a mode is unusable (see checkOutputMode), naming the variable;
 * the config loader is expected to have rejected it already.
 */
export function createOutputCapture(spec: Record<string, OutputMode>): OutputCapture {
  const modes = Object.entries(spec);
  for (const [name, mode] of modes) {
    const problem = checkOutputMode(mode);
    if (problem !== null) throw new Error(`output ${name}: ${problem}`);
  }
  const needs = (kind: OutputMode["kind"]): boolean => modes.some(([, m]) => m.kind === kind);
  const wantFirst = needs("first_line");
  const wantLast = needs("last_line");
  const wantJson = needs("json_field");
  const regexes = modes.flatMap(([name, m]) =>
    m.kind === "regex" ? [{ name, re: new RegExp(m.pattern), value: undefined as string | undefined }] : [],
  );
  let pendingRegexes = regexes.length;

  let firstLine: string | undefined;
  let lastLine: string | undefined;
  let lastJson: Record<string, unknown> | undefined;

  const feed = (line: string): void => {
    if ((wantFirst && firstLine === undefined) || wantLast) {
      if (!isBlank(line)) {
        firstLine ??= line;
        lastLine = line;
      }
    }
    if (wantJson) {
      const obj = parseJsonObject(line);
      if (obj !== undefined) lastJson = obj;
    }
    if (pendingRegexes > 0) {
      for (const r of regexes) {
        if (r.value !== undefined) continue;
        const m = r.re.exec(line);
        if (m === null) continue;
        r.value = m.length > 1 ? (m[1] ?? "") : m[0];
        pendingRegexes--;
      }
    }
  };

  const finish = (exitCode: number | null): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [name, mode] of modes) {
      let value: string | undefined;
      switch (mode.kind) {
        case "first_line":
          value = firstLine;
          break;
        case "last_line":
          value = lastLine;
          break;
        case "json_field":
          value = lastJson === undefined ? undefined : jsonField(lastJson, mode.key);
          break;
        case "regex":
          value = regexes.find((r) => r.name === name)?.value;
          break;
        case "exit_code":
          value = exitCode === null ? undefined : String(exitCode);
          break;
      }
      if (value !== undefined) out[name] = value;
    }
    return out;
  };

  return { feed, finish };
}

/** The line as a JSON object, or undefined. Cheap reject before JSON.parse: most lines are not JSON. */
function parseJsonObject(line: string): Record<string, unknown> | undefined {
  const text = line.trim();
  if (text.charCodeAt(0) !== 123 /* { */ || text.charCodeAt(text.length - 1) !== 125 /* } */) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined; // not JSON: expected for most lines, not an error
  }
}

function jsonField(obj: Record<string, unknown>, key: string): string | undefined {
  const v: unknown = Object.hasOwn(obj, key) ? obj[key] : walk(obj, key.split("."));
  if (v === undefined) return undefined;
  return typeof v === "string" ? v : JSON.stringify(v);
}

function walk(root: unknown, path: string[]): unknown {
  let v = root;
  for (const seg of path) {
    if (typeof v !== "object" || v === null) return undefined;
    if (Array.isArray(v)) {
      if (!/^\d+$/.test(seg)) return undefined;
      v = v[Number(seg)];
    } else {
      if (!Object.hasOwn(v, seg)) return undefined;
      v = (v as Record<string, unknown>)[seg];
    }
  }
  return v;
}
