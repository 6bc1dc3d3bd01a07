/**
 * What the client says when talking to the daemon fails: one line each,
 * naming the daemon and, where it helps, how to fix it. Exit code 1.
 */
import { join } from "node:path";
import { CliError } from "../output.js";
import { describeTarget, NoDaemonError, type Target } from "./target.js";

/** An error answer of the API (`{error: {code, message, details}}`), printed as `svc: <message>`. */
export class ApiError extends CliError {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly details: unknown = null,
  ) {
    super(message);
  }
}

/** 401: says so, and how to set SVC_TOKEN. */
export function unauthorized(target: Target): ApiError {
  const where = describeTarget(target);
  const fix = "set SVC_TOKEN to one of the tokens in auth.bearer.token_file of svcd.yaml (export SVC_TOKEN=...)";
  if (target.kind === "http" && target.token === null && (target.url.username !== "" || target.url.password !== "")) {
    return new ApiError(
      `401 unauthorized: the daemon at ${where} rejected the user name and password of the address; check them against auth.basic in svcd.yaml`,
      401,
      "unauthorized",
    );
  }
  const sent = target.kind === "http" && target.token !== null;
  const what = sent ? `the daemon at ${where} rejected SVC_TOKEN` : `the daemon at ${where} requires a bearer token and SVC_TOKEN is not set`;
  return new ApiError(`401 unauthorized: ${what}; ${fix}`, 401, "unauthorized");
}

const TLS_VERIFY = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/**
 * A failure below HTTP (connect, reset, timeout, TLS) as one clear line.
 * `what` names the request (`GET /api/jobs`, `following run 42`).
 */
export function transportError(target: Target, e: unknown, what: string): CliError {
  const err = e as NodeJS.ErrnoException;
  const code = err?.code ?? "";
  const where = describeTarget(target);
  if (code === "ENOENT" || code === "ECONNREFUSED") {
    if (target.kind === "unix") return new NoDaemonError(target.projectFile, ` (nothing listens on ${target.socketPath}; it is left over from a daemon that died)`);
    if (target.source === "api.addr") {
      return new NoDaemonError(target.projectFile, ` (nothing answers at ${target.url.host}, the address in ${join(target.dataDir ?? "", "api.addr")})`);
    }
    return new CliError(`cannot reach the daemon at ${where} (${target.source}): connection refused; is svcd running there?`);
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return new CliError(`cannot reach the daemon at ${where}: unknown host ${target.kind === "http" ? target.url.hostname : ""}`);
  if (code === "EACCES" || code === "EPERM") return new CliError(`cannot open ${where}: permission denied (the socket is the daemon owner's, mode 0600)`);
  if (TLS_VERIFY.has(code)) {
    return new CliError(`TLS: cannot verify the certificate of the daemon at ${where} (${code}); set SVC_CACERT to the CA file that signed it`);
  }
  if (code === "EPROTO" || code.startsWith("ERR_SSL") || code.startsWith("ERR_TLS")) {
    return new CliError(`TLS handshake with the daemon at ${where} failed (${oneWord(err.message)}); check the scheme (http/https) and SVC_CACERT/SVC_CLIENT_CERT/SVC_CLIENT_KEY`);
  }
  if (code === "ETIMEDOUT_SVC") return new CliError(err.message);
  if (code === "ECONNRESET" || code === "EPIPE" || /socket hang up|premature close|aborted/i.test(err?.message ?? "")) {
    return new CliError(`the daemon closed the connection during ${what}: it stopped or crashed${logHint(target)}`);
  }
  return new CliError(`cannot talk to the daemon at ${where} (${what}): ${oneWord(err?.message ?? String(e))}`);
}

/** A request that took too long, marked so transportError() passes it through. */
export function timeoutError(target: Target, what: string, ms: number): NodeJS.ErrnoException {
  const e: NodeJS.ErrnoException = new Error(
    `no answer from the daemon at ${describeTarget(target)} within ${Math.round(ms / 1000)} s (${what}); set SVC_TIMEOUT=<seconds> to wait longer`,
  );
  e.code = "ETIMEDOUT_SVC";
  return e;
}

export function logHint(target: Target): string {
  return target.dataDir ? `; see ${join(target.dataDir, "svcd.out")} or the daemon's log` : "";
}

function oneWord(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}
