import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Replaces `file` with `content` atomically: the text goes to a temp file in
 * the same directory (same file system, so rename is atomic), is fsynced,
 * the current file is copied to `<file>.bak`, then the temp file is renamed
 * over the original. A reader sees the old file or the new one, never half.
 * Returns the backup path, or null when there was no previous file.
 */
export async function writeAtomically(file: string, content: string): Promise<string | null> {
  const dir = dirname(file);
  const tmp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  let mode = 0o644;
  let existed = true;
  try {
    mode = (await fs.stat(file)).mode & 0o777;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    existed = false;
  }
  const handle = await fs.open(tmp, "wx", mode);
  try {
    await handle.writeFile(content, "utf8");
    await handle.sync();
  } catch (e) {
    await handle.close();
    await fs.rm(tmp, { force: true });
    throw e;
  }
  await handle.close();
  try {
    const backup = existed ? `${file}.bak` : null;
    if (backup) await fs.copyFile(file, backup);
    await fs.rename(tmp, file);
    return backup;
  } catch (e) {
    await fs.rm(tmp, { force: true });
    throw e;
  }
}

/** A file's text, or null when it does not exist. */
export async function readIfExists(file: string): Promise<string | null> {
  try {
    return await fs.readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/** Runs tasks one at a time, in call order (two saves never interleave). */
export function serialized(): <T>(task: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>) => {
    const run = tail.then(task, task);
    tail = run.catch(() => undefined);
    return run;
  };
}
