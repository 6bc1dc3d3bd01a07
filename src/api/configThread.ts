/**
 * The config worker's thread (configWorker.ts starts it): redaction and
 * validation of config texts, off the daemon's event loop. One request at
 * a time, in the order they come; each answered with its value or the error
 * it threw.
 */
import { parentPort } from "node:worker_threads";
import { placeholdersOverSecrets, redactedText, validateConfigText } from "./configAccess.js";
import { threadFailure, type ConfigJob, type ConfigReply, type ConfigRequest } from "./configWorker.js";

function run(job: ConfigJob): unknown {
  switch (job.op) {
    case "redact":
      return redactedText(job.kind, job.text);
    case "validate":
      return validateConfigText(job.kind, job.content, job.path);
    case "placeholders":
      return placeholdersOverSecrets(job.kind, job.content, job.current, job.file);
  }
}

const port = parentPort;
if (port) {
  port.on("message", ({ id, job }: ConfigRequest) => {
    try {
      port.postMessage({ id, ok: true, value: run(job) } satisfies ConfigReply);
    } catch (e) {
      // What the job threw, or a value that cannot be posted: its class and frames, not its message.
      port.postMessage(threadFailure(id, e));
    }
  });
}
