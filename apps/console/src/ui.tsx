// Small shared pieces: the status line read out by screen readers, headings that take focus on
// navigation, byte sizes.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export function Status({ message, error }: { message?: string; error?: string }) {
  return (
    <div class="status" role="status" aria-live="polite">
      {error ? <p class="error">{error}</p> : message ? <p>{message}</p> : null}
    </div>
  );
}

/** The screen's heading; focused when the screen opens so keyboard and screen-reader users land on it. */
export function ScreenTitle({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

export function formatBytes(size: number | undefined): string {
  if (size === undefined) return '—';
  if (size < 1024) return `${size} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = size / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

export const formatDate = (iso: string | undefined) => (iso ? new Date(iso).toLocaleString() : '—');
