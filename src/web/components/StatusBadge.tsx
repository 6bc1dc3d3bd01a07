import type { ComponentChildren } from "preact";

/**
 * State is told by colour AND text (and a glyph), never colour alone. Tones
 * map to CSS variables that have light and dark values.
 */
export type Tone = "ok" | "bad" | "warn" | "run" | "wait" | "muted" | "info";

const GLYPH: Record<Tone, string> = {
  ok: "✓",
  bad: "✕",
  warn: "!",
  run: "▶",
  wait: "…",
  muted: "–",
  info: "i",
};

export function Badge({ tone, children, title }: { tone: Tone; children: ComponentChildren; title?: string }) {
  return (
    <span class={`badge tone-${tone}`} title={title}>
      <span class="glyph" aria-hidden="true">
        {GLYPH[tone]}
      </span>
      {children}
    </span>
  );
}

const RUN_TONES: Record<string, Tone> = {
  SUCCESS: "ok",
  FAILED: "bad",
  RUNNING: "run",
  RETRYING: "warn",
  PENDING: "wait",
  SKIPPED: "muted",
};

export function RunStatusBadge({ status }: { status: string | null | undefined }) {
  if (!status) return <Badge tone="muted">never run</Badge>;
  return <Badge tone={RUN_TONES[status.toUpperCase()] ?? "info"}>{status.toUpperCase()}</Badge>;
}

const HC_TONES: Record<string, Tone> = { pass: "ok", fail: "bad", warn: "warn" };

export function HealthBadge({ status }: { status: string | null | undefined }) {
  if (!status) return <span class="muted">none</span>;
  return <Badge tone={HC_TONES[status] ?? "info"}>healthcheck {status}</Badge>;
}

export function SlaBadge({ breached }: { breached: number | boolean | null | undefined }) {
  return breached ? <Badge tone="warn">SLA breached</Badge> : <span class="muted">met</span>;
}

const ALERT_TONES: Record<string, Tone> = { delivered: "ok", failed: "bad", pending: "wait" };

export function AlertBadge({ status }: { status: string }) {
  return <Badge tone={ALERT_TONES[status] ?? "info"}>{status}</Badge>;
}

const CRED_TONES: Record<string, Tone> = { configured: "ok", "missing required fields": "bad", "env var unset": "warn" };

export function CredentialBadge({ status }: { status: string }) {
  return <Badge tone={CRED_TONES[status] ?? "info"}>{status}</Badge>;
}

export function PausedBadge({ paused }: { paused: boolean | number | null | undefined }) {
  return paused ? <Badge tone="warn">paused</Badge> : <Badge tone="ok">active</Badge>;
}

export function StreamLabel({ stream }: { stream: string }) {
  return <span class={`stream stream-${stream}`}>{stream === "healthcheck" ? "health" : stream}</span>;
}
