import { mkdirSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Writable } from "node:stream";
import { pino, type Logger as PinoLogger } from "pino";
import pretty from "pino-pretty";
import { createStream, type RotatingFileStream } from "rotating-file-stream";
import type { DaemonConfig } from "../config/types.js";

export interface DaemonLog {
  logger: PinoLogger;
  /** Flushes and closes file outputs. */
  close(): Promise<void>;
}

/**
 * Keys whose values never reach a log line (CONTRACT §5). pino replaces
 * them wherever they appear in logged objects.
 */
export const REDACT_PATHS = [
  "token",
  "password",
  "password_hash",
  "passwordHash",
  "authorization",
  "*.token",
  "*.password",
  "*.password_hash",
  "*.passwordHash",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  "env",
  "*.env",
];

/**
 * The daemon's logger from `log.*` (SPEC daemon config): level, json or
 * text, to stdout, stderr or a size-rotated file (`max_size_mb`,
 * `max_backups`, `max_age_days`, gzip `compress`).
 */
export function createDaemonLog(cfg: DaemonConfig["log"], dataDir: string): DaemonLog {
  let destination: Writable;
  let file: RotatingFileStream | null = null;
  if (cfg.output === "file") {
    const path = cfg.file.path ?? join(dataDir, "svcd.log");
    file = rotatingFile(path, cfg.file.maxSizeMb, cfg.file.maxBackups, cfg.file.compress, cfg.file.maxAgeDays);
    destination = file;
  } else {
    destination = cfg.output === "stderr" ? process.stderr : process.stdout;
  }
  const stream =
    cfg.format === "json"
      ? destination
      : pretty({ destination, colorize: false, sync: true, singleLine: true, translateTime: "SYS:yyyy-mm-dd'T'HH:MM:ss.lo", ignore: "pid,hostname" });
  const logger = pino(
    {
      level: cfg.level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: "***" },
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  );
  return {
    logger,
    close: () =>
      new Promise<void>((resolve) => {
        if (!file) return resolve();
        file.end(() => resolve());
      }),
  };
}

/** A size-rotated file: `svcd.log`, then `svcd.log.1(.gz)`, `svcd.log.2(.gz)`, ... */
export function rotatingFile(path: string, maxSizeMb: number, maxBackups: number, compress: boolean, maxAgeDays = 0): RotatingFileStream {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const stream = createStream(basename(path), {
    path: dirname(path),
    size: `${Math.max(1, Math.round(maxSizeMb * 1024))}K`,
    rotate: Math.max(1, maxBackups),
    compress: compress ? "gzip" : false,
    mode: 0o600,
  });
  if (maxAgeDays > 0) {
    stream.on("rotated", () => pruneOlderThan(path, maxAgeDays * 86_400_000));
  }
  stream.on("error", (e) => process.stderr.write(`svcd: log file ${path}: ${e.message}\n`));
  return stream;
}

/** Deletes rotated copies of `path` older than `maxAgeMs` (by modification time). */
function pruneOlderThan(path: string, maxAgeMs: number): void {
  const dir = dirname(path);
  const base = basename(path);
  const cutoff = Date.now() - maxAgeMs;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(`${base}.`)) continue;
    const full = join(dir, name);
    try {
      if (statSync(full).mtimeMs < cutoff) unlinkSync(full);
    } catch {
      // raced with the rotation itself: try again next time
    }
  }
}
