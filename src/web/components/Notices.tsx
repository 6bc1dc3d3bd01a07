import { dismissNotice, holdNotices, noticeStore } from "../lib/notices.js";
import { useStore } from "../lib/store.js";

export function Notices() {
  const notices = useStore(noticeStore);
  return (
    <div
      class="notices"
      aria-live="polite"
      onFocusIn={() => holdNotices(true)}
      onFocusOut={(e) => {
        // Still inside (focus moved from the link to Dismiss): held.
        if (!(e.currentTarget as HTMLElement).contains(e.relatedTarget as Node | null)) holdNotices(false);
      }}
      onMouseEnter={() => holdNotices(true)}
      onMouseLeave={() => holdNotices(document.activeElement !== null && (document.querySelector(".notices")?.contains(document.activeElement) ?? false))}
    >
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
