// Short-lived news at the foot of the screen ("Moved to trash · Undo"), from any screen, read out by
// screen readers; one at a time, gone after a few seconds or when its action is taken.
import { useEffect, useState } from 'preact/hooks';

export interface Toast {
  message: string;
  /** One thing to do about it, such as Undo. */
  action?: { label: string; run: () => void };
}

const SHOWN_MS = 8000;
let show: ((toast: Toast | undefined) => void) | undefined;

export function showToast(toast: Toast): void {
  show?.(toast);
}

/** Where toasts appear: once, in the layout. */
export function ToastHost() {
  const [toast, setToast] = useState<Toast>();
  useEffect(() => {
    show = setToast;
    return () => (show = undefined);
  }, []);
  useEffect(() => {
    if (!toast) return;
    const timer = setTimeout(() => setToast(undefined), SHOWN_MS);
    return () => clearTimeout(timer);
  }, [toast]);
  return (
    <div class="toast-host" role="status" aria-live="polite">
      {toast ? (
        <div class="toast">
          <span>{toast.message}</span>
          {toast.action ? (
            <button
              type="button"
              class="link"
              onClick={() => {
                setToast(undefined);
                toast.action?.run();
              }}
            >
              {toast.action.label}
            </button>
          ) : null}
          <button type="button" class="link toast-close" aria-label="Dismiss" onClick={() => setToast(undefined)}>
            ×
          </button>
        </div>
      ) : null}
    </div>
  );
}
