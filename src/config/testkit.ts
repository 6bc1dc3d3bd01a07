/** Helpers for the config tests (not part of the runtime API). */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConfigIssue, LoadResult } from "./types.js";

/** 1-based line of the first line containing `needle`. */
export function lineOf(text: string, needle: string): number {
  const i = text.split("\n").findIndex((l) => l.includes(needle));
  if (i < 0) throw new Error(`"${needle}" is not in the text`);
  return i + 1;
}

/** 1-based column where `needle` starts on its line. */
export function columnOf(text: string, needle: string): number {
  const line = text.split("\n").find((l) => l.includes(needle))!;
  return line.indexOf(needle) + 1;
}

/** A fresh project directory with the given files. */
export function tempProject(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-config-"));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

export function errorsOf<T>(r: LoadResult<T>): ConfigIssue[] {
  if (r.ok) throw new Error("expected the config to be rejected, but it loaded");
  return r.errors;
}

export function valueOf<T>(r: LoadResult<T>): T {
  if (!r.ok) throw new Error(`expected the config to load, got:\n${r.errors.map((e) => `${e.line}:${e.column} ${e.path}: ${e.message}`).join("\n")}`);
  return r.value;
}

/** The one issue at `pointer`; fails listing what was found otherwise. */
export function issueAt(issues: readonly ConfigIssue[], pointer: string): ConfigIssue {
  const hits = issues.filter((i) => i.path === pointer);
  if (hits.length !== 1) {
    const all = issues.map((i) => `${i.line}:${i.column} ${i.path}: ${i.message}`).join("\n");
    throw new Error(`expected one issue at ${pointer}, found ${hits.length} among:\n${all}`);
  }
  return hits[0]!;
}
