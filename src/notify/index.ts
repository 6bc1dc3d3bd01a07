/**
 * Notifications (SPEC "Events", CONTRACT §6): channels, provider payloads,
 * templates, delivery with retries and alert rows.
 */
export { createNotifier, MAX_ATTACHED_LINES } from "./notifier.js";
export type { IntegrationTestResult, Notifier, NotifierDeps } from "./notifier.js";
export { parseChannel, resolveChannel } from "../config/channels.js";
export type { ChannelError, ResolvedChannel } from "../config/channels.js";
export {
  DEFAULT_MESSAGE,
  TEMPLATE_VARIABLES,
  formatDuration,
  renderTemplate,
  templateVars,
} from "./template.js";
export { entriesFor } from "./rules.js";
export { MAX_ATTEMPTS, RETRY_DELAYS_MS, realSleep, withRetries } from "./deliver.js";
export type { Sleep } from "./deliver.js";
export { buildDelivery, parseDelivery, sendDelivery, PAGER_EVENTS_URL, PAGER_SEVERITY } from "./providers/index.js";
export type { AttemptResult, Delivery, EmailDelivery, HttpDelivery } from "./providers/index.js";
export { scrub, describeUrl } from "./redact.js";
