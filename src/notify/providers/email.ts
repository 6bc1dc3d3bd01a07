import type { BuildInput, EmailDelivery } from "./types.js";
import { logsText } from "./types.js";

/** Subject `[svc] <job> <status>`, body = message (+ logs) (CONTRACT §6). */
export function buildEmail(input: BuildInput): EmailDelivery {
  const { job, run } = input;
  let text = input.message + "\n";
  if (input.logs) {
    text += `\n--- log of run ${run.id} (${input.logs.length} lines) ---\n${logsText(input.logs)}\n`;
  }
  return {
    v: 1,
    provider: "smtp",
    integration: input.channel.integration ?? "",
    to: input.channel.target,
    subject: `[svc] ${job.name} ${run.status}`,
    text,
  };
}
