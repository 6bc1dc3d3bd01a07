/**
 * Reading a config file as text, with every way that can fail turned into
 * one readable message: missing, a directory, unreadable, too big, binary,
 * not UTF-8.
 */
import { readFileSync, statSync } from "node:fs";

/** Larger files are refused before parsing (a 10,000-job svc.yaml is 1-4 MB). */
export const MAX_CONFIG_BYTES = 8 * 1024 * 1024;

export type ReadResult = { ok: true; text: string } | { ok: false; message: string; line: number; column: number };

export function readConfigText(file: string): ReadResult {
  const fail = (message: string, line = 0, column = 0): ReadResult => ({ ok: false, message, line, column });
  let size: number;
  try {
    const st = statSync(file);
    if (st.isDirectory()) return fail("is a directory, not a file (pass the path of the YAML file inside it)");
    if (!st.isFile()) return fail("is not a regular file");
    size = st.size;
  } catch (e) {
    return fail(fsMessage(e));
  }
  if (size > MAX_CONFIG_BYTES) {
    return fail(`file is too large (${(size / 1024 / 1024).toFixed(1)} MB; the limit is ${MAX_CONFIG_BYTES / 1024 / 1024} MB)`);
  }
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch (e) {
    return fail(fsMessage(e));
  }
  return decodeConfigBytes(buf);
}

/** Bytes -> text, refusing binary data and invalid UTF-8 with a position. */
export function decodeConfigBytes(buf: Buffer): ReadResult {
  const nul = buf.indexOf(0);
  if (nul !== -1) {
    const { line, column } = positionOfByte(buf, nul);
    return { ok: false, message: "not a text file (contains a NUL byte); expected YAML", line, column };
  }
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(buf);
    return { ok: true, text };
  } catch {
    const bad = firstInvalidUtf8(buf);
    const { line, column } = positionOfByte(buf, bad);
    return { ok: false, message: "not valid UTF-8 text; save the file as UTF-8", line, column };
  }
}

function positionOfByte(buf: Buffer, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (buf[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: buf.subarray(lineStart, offset).toString("utf8").length + 1 };
}

/** Offset of the first byte that does not start or continue a valid UTF-8 sequence. */
function firstInvalidUtf8(buf: Buffer): number {
  const decoder = new TextDecoder("utf-8", { fatal: false });
  let i = 0;
  while (i < buf.length) {
    const b = buf[i]!;
    let n: number;
    if (b < 0x80) n = 0;
    else if (b >= 0xc2 && b <= 0xdf) n = 1;
    else if (b >= 0xe0 && b <= 0xef) n = 2;
    else if (b >= 0xf0 && b <= 0xf4) n = 3;
    else return i;
    if (i + n >= buf.length) return i;
    const decoded = decoder.decode(buf.subarray(i, i + n + 1));
    if (decoded.includes("\ufffd")) return i;
    i += n + 1;
  }
  return buf.length;
}

function fsMessage(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  switch (err.code) {
    case "ENOENT":
      return "no such file";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EISDIR":
      return "is a directory, not a file";
    case "ENOTDIR":
      return "a parent of this path is not a directory";
    case "ELOOP":
      return "too many symbolic links";
    default:
      return err.message ? err.message.split("\n")[0]! : String(e);
  }
}
