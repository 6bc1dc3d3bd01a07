import type { BuildInput, HttpDelivery } from "./types.js";
import { logsText } from "./types.js";

/** Plain text: `{channel, content}` (CONTRACT §6). */
export function buildForum(input: BuildInput): HttpDelivery {
  const logs = input.logs ? "\n\n" + logsText(input.logs) : "";
  return {
    v: 1,
    provider: "forum",
    integration: input.channel.integration,
    url: null,
    body: { channel: input.channel.target, content: input.message + logs },
  };
}
