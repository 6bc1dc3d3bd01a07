import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/**
 * A modal built on <dialog>: focus moves in and is trapped by the browser,
 * Escape closes it (the `cancel` event), focus returns to the opener.
 */
export function Dialog({
  open,
  title,
  onClose,
  children,
  labelledBy = "dialog-title",
}: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  labelledBy?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (open && !el.open) {
      const opener = document.activeElement as HTMLElement | null;
      el.showModal();
      return () => opener?.focus?.();
    }
    if (!open && el.open) el.close();
    return undefined;
  }, [open]);
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby={labelledBy}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      {open && (
        <>
          <h2 id={labelledBy}>{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}
