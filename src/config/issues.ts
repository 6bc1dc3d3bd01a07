import type { ConfigIssue } from "./types.js";

/** A path into the parsed document: map keys and sequence indexes. */
export type PathSeg = string | number;
export type Path = readonly PathSeg[];

export interface Position {
  line: number;
  column: number;
}

/** Finds the position of the deepest existing node along `path` (1-based). */
export type Locate = (path: Path) => Position;

/** An issue before it has a file position. */
export interface RawIssue {
  path: Path;
  message: string;
  /** Set when the position is known without the document (YAML syntax errors). */
  at?: Position;
}

/** Collects errors and warnings during one load; nothing stops at the first. */
export class IssueList {
  readonly errors: RawIssue[] = [];
  readonly warnings: RawIssue[] = [];

  error(path: Path, message: string): void {
    this.errors.push({ path, message });
  }

  warn(path: Path, message: string): void {
    this.warnings.push({ path, message });
  }
}

/** RFC 6901 JSON pointer: `/jobs/extract/time`. The root is "". */
export function toPointer(path: Path): string {
  let out = "";
  for (const seg of path) out += "/" + String(seg).replace(/~/g, "~0").replace(/\//g, "~1");
  return out;
}

export function fromPointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/**
 * The path as people read it: `jobs.extract.time`, `jobs.extract.tags[1]`,
 * `jobs["nightly.backup"].timeout`. Numeric segments of sequences become
 * `[i]`; a key that is not a plain identifier is quoted in brackets.
 */
export function displayPath(pointer: string): string {
  let out = "";
  for (const seg of fromPointer(pointer)) {
    if (/^[0-9]+$/.test(seg) && out !== "" && !/^(jobs|integrations|env|output|global_env|rbac)$/.test(lastKey(out))) {
      out += `[${seg}]`;
    } else if (/^[A-Za-z0-9_-]+$/.test(seg)) {
      out += out === "" ? seg : `.${seg}`;
    } else {
      out += `[${JSON.stringify(seg)}]`;
    }
  }
  return out;
}

function lastKey(display: string): string {
  const m = /([A-Za-z0-9_-]+)$/.exec(display);
  return m ? m[1]! : "";
}

export function finalize(raw: readonly RawIssue[], file: string, locate: Locate | null): ConfigIssue[] {
  return raw.map((r) => {
    const at = r.at ?? (locate ? locate(r.path) : { line: 0, column: 0 });
    return { file, line: at.line, column: at.column, path: toPointer(r.path), message: r.message };
  });
}

/**
 * One line per issue: `svc.yaml:12:5: jobs.extract.time: must be 4 digits HHMM`.
 * `file` is shown as given (the CLI passes a path relative to the cwd).
 */
export function formatIssue(issue: ConfigIssue, shownFile: string = issue.file, prefix = ""): string {
  const where = issue.line > 0 ? `${shownFile}:${issue.line}:${issue.column}` : shownFile;
  const path = issue.path === "" ? "" : `${displayPath(issue.path)}: `;
  return `${where}: ${prefix}${path}${issue.message}`;
}
