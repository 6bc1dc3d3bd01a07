import { mkdirSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Writable } from "node:stream";
import { pino, type Logger as PinoLogger } from "pino";
import { prettyFactory } from "pino-pretty";
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
    file = rotatingFile(path, { maxSizeMb: cfg.file.maxSizeMb, maxBackups: cfg.file.maxBackups, compress: cfg.file.compress, maxAgeDays: cfg.file.maxAgeDays });
    destination = file;
  } else {
    destination = cfg.output === "stderr" ? process.stderr : process.stdout;
  }
  // Text is formatted in the same synchronous write as JSON: pino-pretty's own
  // stream is an asynchronous pipeline that loses lines still in flight at close.
  const stream = cfg.format === "json" ? destination : textStream(destination);
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

function textStream(destination: Writable): { write(line: string): void } {
  const format = prettyFactory({ colorize: false, singleLine: true, translateTime: "SYS:yyyy-mm-dd'T'HH:MM:ss.lo", ignore: "pid,hostname" });
  return { write: (line: string) => void destination.write(format(line)) };
}

export interface RotationOptions {
  maxSizeMb: number;
  /** Rotated copies kept; 0 keeps all. */
  maxBackups: number;
  compress: boolean;
  /** Rotated copies older than this are deleted at each rotation; 0 keeps them. */
  maxAgeDays?: number;
}

/**
 * A size-rotated file, mode 0600. With `maxBackups` > 0 the copies are
 * `svcd.log.1(.gz)` (newest) to `svcd.log.N(.gz)`, like logrotate; with 0
 * every copy is kept under a timestamped name, `svcd.log.20261122T020233-1(.gz)`.
 */
export function rotatingFile(path: string, opts: RotationOptions): RotatingFileStream {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const base = basename(path);
  const common = {
    path: dirname(path),
    size: `${Math.max(1, Math.round(opts.maxSizeMb * 1024))}K`,
    compress: opts.compress ? ("gzip" as const) : false,
    mode: 0o600,
  };
  const keepAll = (time: number | Date | null, index?: number): string => {
    if (time === null) return base;
    const stamp = new Date(time).toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
    return `${base}.${stamp}-${index ?? 1}${opts.compress ? ".gz" : ""}`;
  };
  const stream = opts.maxBackups > 0 ? createStream(base, { ...common, rotate: opts.maxBackups }) : createStream(keepAll, common);
  const maxAgeDays = opts.maxAgeDays ?? 0;
  if (maxAgeDays > 0) {
    const prune = () => pruneOlderThan(path, maxAgeDays * 86_400_000);
    prune();
    stream.on("rotated", prune);
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
