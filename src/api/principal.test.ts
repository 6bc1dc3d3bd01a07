/**
 * The Unix socket's trust marker (CONTRACT §1: socket peers are admin). Only the daemon's socket
 * server can mark a request; code elsewhere in the process cannot forge the mark.
 */
import { IncomingMessage } from "node:http";
import { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { isUnixSocketRequest, markUnixSocketRequest } from "./principal.js";

const request = () => new IncomingMessage(new Socket());

describe("the Unix socket trust marker", () => {
  it("trusts a request the socket server marked, and no other", () => {
    const marked = request();
    const other = request();
    markUnixSocketRequest(marked);
    expect(isUnixSocketRequest(marked)).toBe(true);
    expect(isUnixSocketRequest(other)).toBe(false);
  });

  it("cannot be forged with a global symbol or a property any code can set", () => {
    const forged = request() as unknown as Record<PropertyKey, unknown>;
    forged[Symbol.for("svc.api.unixSocket")] = true;
    for (const s of Object.getOwnPropertySymbols(request())) forged[s] = true;
    forged.unixSocket = true;
    expect(isUnixSocketRequest(forged as unknown as IncomingMessage)).toBe(false);
  });
});
