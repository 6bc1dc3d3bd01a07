/**
 * The logging seam. The daemon passes a pino logger (pino's signature:
 * an optional object of fields first, then the message); tests pass
 * `memoryLogger()` to assert on what was logged.
 */
export interface Logger {
  debug(obj: object, msg?: string): void;
  debug(msg: string): void;
  info(obj: object, msg?: string): void;
  info(msg: string): void;
  warn(obj: object, msg?: string): void;
  warn(msg: string): void;
  error(obj: object, msg?: string): void;
  error(msg: string): void;
}

export interface LogEntry {
  level: "debug" | "info" | "warn" | "error";
  msg: string;
  fields: Record<string, unknown>;
}

/** A logger that keeps entries in memory, for tests. */
export function memoryLogger(): Logger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at =
    (level: LogEntry["level"]) =>
    (a: object | string, b?: string): void => {
      if (typeof a === "string") entries.push({ level, msg: a, fields: {} });
      else entries.push({ level, msg: b ?? "", fields: { ...(a as Record<string, unknown>) } });
    };
  return { entries, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};
