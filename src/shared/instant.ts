/**
 * An ISO 8601 instant as people write one on a command line or in a request:
 * a date alone (`2026-11-01`, UTC midnight) or a date-time with `Z` or an
 * offset (`2026-11-01T06:00:00Z`, `2026-11-01T01:00-05:00`). A date-time
 * without a zone is refused: it would mean the reader's zone. Epoch ms, or
 * null when the text is none of these.
 */
export function parseInstant(text: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2}))?$/.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}
