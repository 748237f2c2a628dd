// A modal confirmation on the browser's own <dialog>: showModal() moves focus inside and makes
// the rest of the page inert, Escape cancels, and focus goes back to what opened it.

import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { prevented } from './ui.js';

export function ConfirmDialog({
  title,
  children,
  confirm,
  cancel,
  busy,
  onConfirm,
  onClose,
}: {
  title: string;
  children: ComponentChildren;
  confirm: string;
  cancel: string;
  busy?: boolean;
  onConfirm(): void;
  onClose(): void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const cancelButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    const d = ref.current!;
    d.showModal();
    // The harmless choice takes focus: Enter alone must not destroy anything.
    cancelButton.current?.focus();
    return () => {
      if (d.open) d.close();
      opener?.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby="dialog-title"
      aria-describedby="dialog-body"
      onCancel={prevented(() => onClose())}
    >
      <h2 id="dialog-title">{title}</h2>
      <div id="dialog-body">{children}</div>
      <div class="dialog-actions">
        <button type="button" class="secondary" ref={cancelButton} onClick={onClose}>
          {cancel}
        </button>
        <button type="button" class="danger" disabled={busy} onClick={onConfirm}>
          {confirm}
        </button>
      </div>
    </dialog>
  );
}
