/**
 * Jobs for svc.yaml's `jobs:` map (two-space indented) that the engine and the
 * e2e backfill tests share: a daily `extract` whose output `day` is its slot,
 * and a `transform` after it printing the output it got and its own
 * SVC_SCHEDULED_AT, so each transform shows which cycle's extract it saw.
 */
export const EXTRACT_TRANSFORM_JOBS = `  extract:
    command: printf '{"day":"%s"}\\n' "$SVC_SCHEDULED_AT"
    frequency: daily
    time: "0100"
    timezone: UTC
    output: {day: "json_field:day"}
  transform:
    command: echo "transform of {{ outputs.extract.day }} at $SVC_SCHEDULED_AT"
    frequency: after:extract
`;
