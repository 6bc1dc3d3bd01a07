import type { ComponentChildren } from "preact";
import { Dialog } from "./Dialog.js";

export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  danger,
  busy,
  onConfirm,
  onClose,
}: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onClose: () => void;
}) {
  return (
    <Dialog open={open} title={title} onClose={onClose} labelledBy="confirm-title">
      <div>{children}</div>
      <div class="dialog-actions">
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        <button type="button" class={danger ? "danger" : "primary"} onClick={onConfirm} disabled={busy}>
          {confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
