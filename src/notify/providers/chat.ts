import type { BuildInput, HttpDelivery } from "./types.js";
import { logsText } from "./types.js";

/** Incoming-webhook style: `{channel, text}` (CONTRACT §6). Logs go in a code block. */
export function buildChat(input: BuildInput): HttpDelivery {
  const logs = input.logs ? "\n```\n" + logsText(input.logs) + "\n```" : "";
  return {
    v: 1,
    provider: "chat",
    integration: input.channel.integration,
    url: null,
    body: { channel: input.channel.target, text: input.message + logs },
  };
}
