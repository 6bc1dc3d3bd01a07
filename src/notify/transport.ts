import { connect, type Socket } from "node:net";
import type { IntegrationConfig } from "../config/types.js";
import { SvcError } from "../shared/svcError.js";
import { toError } from "../shared/toError.js";
import type { AttemptResult } from "./providers/types.js";
import { describeUrl, scrub } from "./redact.js";

/** Thrown when the notifier is stopping: the attempt did not complete and must not be recorded. */
export class DeliveryInterrupted extends SvcError {
  constructor() {
    super("internal", "delivery interrupted by shutdown");
    this.name = "DeliveryInterrupted";
  }
}

export interface SendOptions {
  timeoutMs: number;
  /** Aborted when the notifier stops. */
  signal: AbortSignal;
}

// Error texts quote at most this much of a remote answer.
const MAX_QUOTE = 300;
// A response body larger than this is cut (we only quote or return it).
const MAX_BODY = 64 * 1024;

/** One POST of a JSON body. Never throws except DeliveryInterrupted. */
export async function postJson(url: string, body: unknown, opts: SendOptions): Promise<AttemptResult> {
  const where = `POST ${describeUrl(url)}`;
  if (opts.signal.aborted) throw new DeliveryInterrupted();
  if (hasCredentials(url)) return fail(null, null, `${where}: the URL holds a user name or password, which is not sent: remove it from the URL`, false);
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "svc-notify" },
      body: JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.any([timeout, opts.signal]),
    });
    text = await readCapped(res, MAX_BODY);
  } catch (e) {
    if (opts.signal.aborted) throw new DeliveryInterrupted();
    if (timeout.aborted) {
      return fail(null, null, `${where}: no response within ${opts.timeoutMs} ms (timed out)`, true);
    }
    return fail(null, null, `${where}: network error: ${scrub(networkReason(e), [])}`, true);
  }
  const response = parseBody(text, res.headers.get("content-type"));
  const s = res.status;
  if (s >= 200 && s < 300) return { ok: true, status: s, response, error: null, retryable: false };
  const quote = text.trim() ? `: ${oneLine(text)}` : "";
  if (s >= 300 && s < 400) return fail(s, response, `${where}: HTTP ${s} (redirects are not followed)`, false);
  return fail(s, response, `${where}: HTTP ${s}${quote}`, s === 429 || s >= 500);
}

/**
 * The body's first `max` bytes as text; the rest is not read (the connection is let go): an endpoint
 * answering with a huge or endless body must not fill the daemon's memory.
 */
async function readCapped(res: Response, max: number): Promise<string> {
  if (res.body === null) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    if (size >= max) await reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, max));
}

function hasCredentials(url: string): boolean {
  try {
    const u = new URL(url);
    return u.username !== "" || u.password !== "";
  } catch {
    return false;
  }
}

function fail(status: number | null, response: unknown, error: string, retryable: boolean): AttemptResult {
  return { ok: false, status, response, error, retryable };
}

function parseBody(text: string, contentType: string | null): unknown {
  if (contentType?.includes("json")) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

function oneLine(s: string): string {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > MAX_QUOTE ? t.slice(0, MAX_QUOTE) + "…" : t;
}

/** fetch wraps the socket error in `cause`; its code (ECONNREFUSED...) is the useful part. */
function networkReason(e: unknown): string {
  const err = toError(e);
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  if (cause && typeof cause === "object") {
    if (typeof cause.code === "string") return cause.code;
    if (typeof cause.message === "string") return cause.message;
  }
  return err.message;
}

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

const SMTP_NETWORK_CODES = new Set(["ECONNECTION", "ETIMEDOUT", "ESOCKET", "EDNS", "ECONNRESET"]);

/**
 * Sends one mail through the integration's SMTP server. STARTTLS is used when
 * the server offers it (port 465 is implicit TLS); AUTH when a username is set.
 * Never throws except DeliveryInterrupted.
 */
export async function sendMail(
  integration: IntegrationConfig,
  mail: MailMessage,
  opts: SendOptions,
): Promise<AttemptResult> {
  const port = integration.port ?? 587;
  const where = `SMTP ${integration.host ?? "?"}:${port}`;
  // Loaded on the first mail: only SMTP integrations need it, and every daemon start paid ~15 ms for it.
  const { default: nodemailer } = await import("nodemailer");
  if (opts.signal.aborted) throw new DeliveryInterrupted();
  // The connection's socket, ours to destroy: nodemailer's close() of a single-mail transport does not end
  // a connection whose server keeps trickling bytes, so each timed-out attempt left one open. We open it;
  // nodemailer speaks SMTP over it (greeting timeout, STARTTLS) as over its own. Port 465 (TLS from the
  // first byte) keeps nodemailer's own connection.
  let socket: Socket | null = null;
  const transporter = nodemailer.createTransport({
    host: integration.host ?? undefined,
    port,
    secure: port === 465,
    ...(port === 465
      ? {}
      : {
          getSocket: (_options: unknown, callback: (err: Error | null, socketOptions?: { connection: Socket }) => void) => {
            socket = connect({ host: integration.host ?? "localhost", port });
            callback(null, { connection: socket });
          },
        }),
    auth: integration.username
      ? { user: integration.username, pass: integration.password ?? "" }
      : undefined,
    connectionTimeout: opts.timeoutMs,
    greetingTimeout: opts.timeoutMs,
    socketTimeout: opts.timeoutMs,
    dnsTimeout: opts.timeoutMs,
  });
  let timer: NodeJS.Timeout | undefined;
  const cut = () => {
    transporter.close();
    (socket as Socket | null)?.destroy();
  };
  const onAbort = cut;
  opts.signal.addEventListener("abort", onAbort, { once: true });
  try {
    // socketTimeout is an inactivity limit; this bounds a server that trickles.
    const overall = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        cut();
        reject(Object.assign(new Error("overall timeout"), { code: "ETIMEDOUT" }));
      }, opts.timeoutMs * 3);
    });
    const info = (await Promise.race([
      transporter.sendMail({ from: integration.from ?? undefined, to: mail.to, subject: mail.subject, text: mail.text }),
      overall,
    ])) as { response?: string };
    const reply = String(info.response ?? "");
    return { ok: true, status: replyCode(reply), response: reply, error: null, retryable: false };
  } catch (e) {
    if (opts.signal.aborted) throw new DeliveryInterrupted();
    const err = toError(e) as Error & { code?: string; responseCode?: number; response?: string };
    const code = typeof err.responseCode === "number" ? err.responseCode : null;
    const timedOut = err.code === "ETIMEDOUT" || /timeout/i.test(err.message);
    const reason = timedOut ? `no response within ${opts.timeoutMs} ms (timed out)` : oneLine(err.message);
    // SMTP 4xx replies are transient by definition (RFC 5321); 5xx are permanent. An error with neither a
    // reply nor a code of nodemailer's ("Unexpected socket close": the server hung up before its greeting)
    // is the connection's, retried as connection errors are.
    const retryable =
      timedOut ||
      (err.code !== undefined && SMTP_NETWORK_CODES.has(err.code)) ||
      (code !== null && code >= 400 && code < 500) ||
      (code === null && err.code === undefined);
    return fail(code, err.response ?? null, `${where}: ${reason}`, retryable);
  } finally {
    clearTimeout(timer);
    opts.signal.removeEventListener("abort", onAbort);
    cut();
  }
}

function replyCode(reply: string): number | null {
  const m = /^(\d{3})/.exec(reply);
  return m ? Number(m[1]) : null;
}
