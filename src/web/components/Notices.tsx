import { dismissNotice, noticeStore } from "../lib/notices.js";
import { useStore } from "../lib/store.js";

export function Notices() {
  const notices = useStore(noticeStore);
  return (
    <div class="notices" aria-live="polite">
      {notices.map((n) => (
        <div key={n.id} class={`notice notice-${n.kind}`} role={n.kind === "error" ? "alert" : "status"}>
          <span>{n.text}</span>
          {n.link && (
            <a href={n.link.href} class="notice-link">
              {n.link.label}
            </a>
          )}
          <button type="button" class="icon" aria-label="Dismiss" onClick={() => dismissNotice(n.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
