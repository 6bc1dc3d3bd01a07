import { createServer as httpServer } from "node:http";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { integration, startMailServer, startReceiver, type MailServer, type Receiver } from "./testkit.js";
import { DeliveryInterrupted, postJson, sendMail } from "./transport.js";

/** A port that was just free: nothing listens there. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const live = () => ({ timeoutMs: 300, signal: new AbortController().signal });

describe("postJson", () => {
  let rx: Receiver;
  beforeAll(async () => {
    rx = await startReceiver();
  });
  afterAll(() => rx.close());

  it("posts JSON and returns the remote status and parsed body", async () => {
    rx.script.push({ status: 200, body: { accepted: 1 } });
    const r = await postJson(`${rx.url}/hook`, { a: 1 }, live());
    expect(r).toEqual({ ok: true, status: 200, response: { accepted: 1 }, error: null, retryable: false });
    const got = rx.received.at(-1)!;
    expect(got.method).toBe("POST");
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.body).toEqual({ a: 1 });
  });

  it.each([
    [500, true],
    [503, true],
    [429, true],
    [400, false],
    [404, false],
  ])("HTTP %i: retryable %s", async (status, retryable) => {
    rx.script.push({ status, body: { why: "nope" } });
    const r = await postJson(`${rx.url}/hook`, {}, live());
    expect(r.ok).toBe(false);
    expect(r.status).toBe(status);
    expect(r.retryable).toBe(retryable);
    expect(r.error).toBe(`POST ${rx.url}: HTTP ${status}: {"why":"nope"}`);
  });

  it("times out a receiver that never answers, with a clear error", async () => {
    rx.script.push("hang");
    const t0 = Date.now();
    const r = await postJson(`${rx.url}/slow`, {}, live());
    // It waited for the 300 ms budget (less a few ms: Node starts timers from the event loop's cached
    // time), then gave up on a receiver that never answers. The upper bound only tells "gave up" from
    // "hung": 33 times the budget, beyond any stall of a loaded machine. How close to the budget a
    // timeout fires is a figure: bench/isolation.bench.ts.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r).toMatchObject({ ok: false, status: null, retryable: true });
    expect(r.error).toBe(`POST ${rx.url}: no response within 300 ms (timed out)`);
  });

  it("reports a refused connection as a retryable network error", async () => {
    const port = await closedPort();
    const r = await postJson(`http://127.0.0.1:${port}/x`, {}, live());
    expect(r).toMatchObject({ ok: false, retryable: true });
    expect(r.error).toBe(`POST http://127.0.0.1:${port}: network error: ECONNREFUSED`);
  });

  it("never puts the URL path or query (tokens) in the error", async () => {
    rx.script.push({ status: 500 });
    const r = await postJson(`${rx.url}/services/T0/SECRETPATH?token=SECRETQ`, {}, live());
    expect(r.error).not.toMatch(/SECRET/);
  });

  it("reads at most 64 KiB of an answer and lets the rest go: an endless body neither fills memory nor times out", async () => {
    const chunk = Buffer.alloc(16 * 1024, "x");
    let sent = 0;
    const endless = httpServer((_req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      const pump = () => {
        while (res.write(chunk)) if ((sent += chunk.length) > 512 * 1024 * 1024) return res.end();
        res.once("drain", pump);
      };
      pump();
    });
    await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}`;
      const r = await postJson(`${url}/hook`, {}, { timeoutMs: 5_000, signal: new AbortController().signal });
      expect(r).toMatchObject({ ok: false, status: 500, retryable: true });
      expect(r.response).toBe("x".repeat(64 * 1024));
      expect(r.error).toBe(`POST ${url}: HTTP 500: ${"x".repeat(300)}…`);
      expect(sent).toBeLessThan(64 * 1024 * 1024);
    } finally {
      endless.closeAllConnections();
      await new Promise((resolve) => endless.close(resolve));
    }
  });

  it("never puts the user and password of a URL in the error", async () => {
    const port = await closedPort();
    const r = await postJson(`http://user:s3cret-tok@127.0.0.1:${port}/hook`, {}, live());
    expect(r).toEqual({
      ok: false,
      status: null,
      response: null,
      error: `POST http://127.0.0.1:${port}: the URL holds a user name or password, which is not sent: remove it from the URL`,
      retryable: false,
    });
  });

  it("throws DeliveryInterrupted when the stop signal aborts a request", async () => {
    rx.script.push("hang");
    const stop = new AbortController();
    const p = postJson(`${rx.url}/slow`, {}, { timeoutMs: 10_000, signal: stop.signal });
    setTimeout(() => stop.abort(), 50);
    await expect(p).rejects.toBeInstanceOf(DeliveryInterrupted);
  });
});

describe("sendMail", () => {
  let smtp: MailServer;
  beforeAll(async () => {
    smtp = await startMailServer({ user: "svc-user", pass: "s3cret-pass" });
  });
  afterAll(() => smtp.close());

  const mailer = (more = {}) =>
    integration("mailer", {
      provider: "smtp",
      host: "127.0.0.1",
      port: smtp.port,
      from: "svc@example.org",
      username: "svc-user",
      password: "s3cret-pass",
      ...more,
    });

  it("delivers with AUTH and returns the SMTP reply", async () => {
    const r = await sendMail(mailer(), { to: "ops@example.org", subject: "[svc] s", text: "body\n" }, live());
    expect(r.ok).toBe(true);
    expect(r.status).toBe(250);
    expect(String(r.response)).toMatch(/^250/);
    const m = smtp.mails.at(-1)!;
    expect(m.auth).toEqual({ username: "svc-user", password: "s3cret-pass" });
    expect(m.from).toBe("svc@example.org");
    expect(m.to).toEqual(["ops@example.org"]);
  });

  it("fails at once on bad credentials, without the password in the error", async () => {
    const r = await sendMail(mailer({ password: "wrong-pass" }), { to: "o@x.org", subject: "s", text: "t" }, live());
    expect(r.ok).toBe(false);
    expect(r.retryable).toBe(false);
    expect(r.status).toBe(535);
    expect(r.error).toMatch(/^SMTP 127\.0\.0\.1:\d+: Invalid login/);
    expect(r.error).not.toContain("wrong-pass");
  });

  it("cuts the connection of a server that trickles its reply past the overall time limit", async () => {
    let closed = false;
    const trickles: NodeJS.Timeout[] = [];
    const slow = createServer((c) => {
      c.on("close", () => (closed = true));
      c.on("error", () => {});
      c.write("220 slow\r\n");
      let data = false;
      c.on("data", (d) => {
        const l = d.toString();
        if (data) {
          if (/\r\n\.\r\n$/.test(l)) trickles.push(setInterval(() => c.writable && c.write("2"), 100)); // never ends its line
        } else if (/^EHLO/i.test(l)) c.write("250 hi\r\n");
        else if (/^(MAIL|RCPT)/i.test(l)) c.write("250 ok\r\n");
        else if (/^DATA/i.test(l)) {
          data = true;
          c.write("354 go\r\n");
        }
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    try {
      const r = await sendMail(mailer({ port: (slow.address() as AddressInfo).port, username: undefined }), { to: "o@x.org", subject: "s", text: "t" }, live());
      expect(r).toMatchObject({ ok: false, retryable: true, error: expect.stringMatching(/no response within 300 ms \(timed out\)$/) });
      // Before, nodemailer's close() left this socket open for as long as the server went on.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(closed).toBe(true);
    } finally {
      for (const t of trickles) clearInterval(t);
      slow.close();
    }
  });

  it("retries a server that hangs up before its greeting (no reply, no error code)", async () => {
    const rude = createServer((c) => c.end());
    await new Promise<void>((resolve) => rude.listen(0, "127.0.0.1", resolve));
    try {
      // A budget longer than nodemailer's wait (1 s) before it calls the close unexpected: not a timeout.
      const budget = { timeoutMs: 5_000, signal: new AbortController().signal };
      const r = await sendMail(mailer({ port: (rude.address() as AddressInfo).port }), { to: "o@x.org", subject: "s", text: "t" }, budget);
      expect(r).toMatchObject({ ok: false, status: null, retryable: true });
      expect(r.error).toMatch(/^SMTP 127\.0\.0\.1:\d+: Unexpected socket close$/);
    } finally {
      await new Promise((resolve) => rude.close(resolve));
    }
  });

  it("reports a refused connection as retryable", async () => {
    const port = await closedPort();
    const r = await sendMail(mailer({ port }), { to: "o@x.org", subject: "s", text: "t" }, live());
    expect(r).toMatchObject({ ok: false, retryable: true });
    expect(r.error).toMatch(new RegExp(`^SMTP 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
  });

  it("upgrades with STARTTLS when the server offers it (here: its self-signed certificate is refused)", async () => {
    const tlsServer = await startMailServer({ user: "u", pass: "p", starttls: true });
    try {
      const r = await sendMail(mailer({ port: tlsServer.port, username: "u", password: "p" }), { to: "o@x.org", subject: "s", text: "t" }, live());
      expect(r.ok).toBe(false);
      expect(r.error).toMatch(/certificate/i);
      expect(tlsServer.mails).toHaveLength(0);
    } finally {
      await tlsServer.close();
    }
  });
});
