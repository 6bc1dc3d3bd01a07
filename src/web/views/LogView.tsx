import { memo } from "preact/compat";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { followLogs, type LogStreamHandlers } from "../lib/logStream.js";
import type { LogLineMsg, LogStream, RunStatus } from "../lib/types.js";
import { Badge, StreamLabel } from "../components/StatusBadge.js";

/** Lines kept in the page; older ones stay in the database (Database › run_logs). */
const MAX_LINES = 20_000;
const STREAMS: LogStream[] = ["stdout", "stderr", "healthcheck"];
/**
 * Lines are drawn in blocks of this many, by their place in the run's log
 * (not in what is shown). A batch of new lines renders the last block or a
 * new one: the blocks before it keep their lines and are not diffed again
 * (20,000 lines meant 20,000 rows compared for every batch), and the browser
 * skips the layout and paint of blocks off screen (`content-visibility:
 * auto` in styles.css).
 */
const BLOCK = 256;

interface Block {
  key: number;
  lines: LogLineMsg[];
}

/** The shown lines in blocks of BLOCK by their place in the log (`first` is the place of lines[0]). */
function blocksOf(lines: LogLineMsg[], first: number, shown: Record<LogStream, boolean>): Block[] {
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; ) {
    const key = Math.floor((first + i) / BLOCK);
    const end = Math.min(lines.length, (key + 1) * BLOCK - first);
    const part = lines.slice(i, end).filter((l) => shown[l.stream] !== false);
    if (part.length > 0) blocks.push({ key, lines: part });
    i = end;
  }
  return blocks;
}

/** One block; drawn again only when its lines change (a new line at its end, an old one dropped, a toggle). */
const LogBlock = memo(
  function LogBlock({ lines }: { lines: LogLineMsg[] }) {
    return (
      <div class="ln-block">
        {lines.map((l) => (
          <div key={l.seq} class={`ln ln-${l.stream}`}>
            <span class="ln-seq" aria-hidden="true">
              {l.seq}
            </span>
            <StreamLabel stream={l.stream} />
            <span class="ln-text">{l.line}</span>
          </div>
        ))}
      </div>
    );
  },
  (a, b) => a.lines.length === b.lines.length && a.lines[0] === b.lines[0] && a.lines[a.lines.length - 1] === b.lines[b.lines.length - 1],
);

type ConnState = Parameters<LogStreamHandlers["onState"]>[0];

function ConnBadge({ state }: { state: ConnState }) {
  const key = typeof state === "object" ? "error" : state;
  return (
    <span data-testid="log-conn" data-state={key}>
      {typeof state === "object" ? (
        <Badge tone="bad">{state.error}</Badge>
      ) : state === "live" ? (
        <Badge tone="run">live</Badge>
      ) : state === "ended" ? (
        <Badge tone="muted">stream ended</Badge>
      ) : (
        <Badge tone="wait">{state}</Badge>
      )}
    </span>
  );
}

/**
 * Live logs of one run. Follows the bottom while the reader is there;
 * scrolling up stops following, scrolling back to the bottom (or the
 * button) resumes it.
 */
export function LogView({ runId, onEnd }: { runId: number; onEnd: (status: RunStatus) => void }) {
  const [lines, setLines] = useState<LogLineMsg[]>([]);
  const [dropped, setDropped] = useState(0);
  const [conn, setConn] = useState<ConnState>("connecting");
  const [follow, setFollow] = useState(true);
  const [shown, setShown] = useState<Record<LogStream, boolean>>({ stdout: true, stderr: true, healthcheck: true });
  const box = useRef<HTMLDivElement>(null);
  const endRef = useRef(onEnd);
  endRef.current = onEnd;

  useEffect(
    () =>
      followLogs(runId, {
        onLines: (batch) =>
          setLines((prev) => {
            const next = prev.concat(batch);
            if (next.length <= MAX_LINES) return next;
            setDropped((d) => d + next.length - MAX_LINES);
            return next.slice(next.length - MAX_LINES);
          }),
        onEnd: (status) => endRef.current(status),
        onState: setConn,
      }),
    [runId],
  );

  useLayoutEffect(() => {
    const el = box.current;
    if (el && follow) el.scrollTop = el.scrollHeight;
  }, [lines, follow, shown]);

  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 8;
    if (atBottom !== follow) setFollow(atBottom);
  };

  const blocks = blocksOf(lines, dropped, shown);
  return (
    <div class="logs">
      <div class="logs-bar">
        <ConnBadge state={conn} />
        <fieldset class="stream-toggles">
          <legend class="sr-only">Streams</legend>
          {STREAMS.map((s) => (
            <label key={s}>
              <input
                type="checkbox"
                checked={shown[s]}
                onChange={(e) => setShown({ ...shown, [s]: (e.currentTarget as HTMLInputElement).checked })}
              />{" "}
              <StreamLabel stream={s} />
            </label>
          ))}
        </fieldset>
        <span class="sub" aria-live="polite" data-testid="log-count">
          {lines.length} lines{dropped > 0 && ` (${dropped} older lines not shown)`}
        </span>
        <button
          type="button"
          aria-pressed={follow}
          onClick={() => {
            setFollow(true);
            const el = box.current;
            if (el) el.scrollTop = el.scrollHeight;
          }}
        >
          {follow ? "Following ↓" : "Jump to latest ↓"}
        </button>
      </div>
      <div
        ref={box}
        class="log-box"
        onScroll={onScroll}
        tabIndex={0}
        role="log"
        aria-label={`Log of run ${runId}`}
        aria-live="off"
      >
        {blocks.length === 0 ? (
          <p class="muted log-empty">{conn === "ended" ? "This run wrote no output." : "Waiting for output…"}</p>
        ) : (
          blocks.map((b) => <LogBlock key={b.key} lines={b.lines} />)
        )}
      </div>
    </div>
  );
}
