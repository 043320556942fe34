// Small shared pieces: the status line read out by screen readers, headings that take focus on
// navigation, paging, byte sizes and dates.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './api';

export function Status({ message, error }: { message?: string; error?: string }) {
  return (
    <div class="status" role="status" aria-live="polite">
      {error ? <p class="error">{error}</p> : message ? <p>{message}</p> : null}
    </div>
  );
}

export type StatusLine = { message?: string; error?: string };

/** Runs a change, then shows `message` and reads the screen again; or shows what went wrong. */
export async function runChange(
  work: () => Promise<unknown>,
  message: string,
  show: (status: StatusLine) => void,
  reload: () => Promise<unknown>,
): Promise<void> {
  try {
    await work();
    show({ message });
    await reload();
  } catch (e) {
    show({ error: errorText(e) });
  }
}

/** The screen's heading; focused when the screen opens so keyboard and screen-reader users land on it. */
/**
 * Orders a screen's reads of a list whose question changes (filters, a search typed): `begin()` starts a
 * read of a new question, `begin(true)` a further page of the current one; the function it returns says
 * whether the read's answer may still be shown, false once a later question was asked (an answer that
 * arrives after a later one's must not replace it).
 */
export function useLatestRead(): (morePages?: boolean) => () => boolean {
  const asked = useRef(0);
  return (morePages = false) => {
    const read = morePages ? asked.current : ++asked.current;
    return () => read === asked.current;
  };
}

export function ScreenTitle({ id, children }: { id: string; children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <h1 id={id} tabIndex={-1} ref={ref}>
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
  // "1 GiB", "357.2 KiB": one decimal, none when it is 0.
  return `${value.toFixed(1).replace(/\.0$/, '')} ${units[unit]}`;
}

/** "3 files", "1 file". */
export const countWords = (count: number, one = 'file', many = `${one}s`) => `${count.toLocaleString('en')} ${count === 1 ? one : many}`;

export const formatDate = (iso: string | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/** "3 Nov", "3 Nov 2025" (another year), "14:05" (today): short enough for a list. */
export function shortDate(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  const now = new Date();
  if (date.toDateString() === now.toDateString()) return date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  const sameYear = date.getFullYear() === now.getFullYear();
  return date.toLocaleDateString(undefined, { day: 'numeric', month: 'short', ...(sameYear ? {} : { year: 'numeric' }) });
}

/**
 * Previous / next over a list of `total` items shown `take` at a time from `skip`, and where this page
 * lies ("51–100 of 254"); nothing when they fit on one page. `counting` says
 * the total is still growing (more is being read), so it reads "of 1,000+".
 */
export function Pager({
  label,
  skip,
  take,
  total,
  counting = false,
  onSkip,
}: {
  label: string;
  skip: number;
  take: number;
  total: number;
  counting?: boolean;
  onSkip: (skip: number) => void;
}) {
  const pages = Math.max(1, Math.ceil(total / take));
  // One page needs no paging; the screen's summary says how many there are.
  if (pages === 1 && !counting) return null;
  const page = Math.floor(skip / take) + 1;
  const shown = total === 0 ? 'None' : `${(skip + 1).toLocaleString('en')}–${Math.min(skip + take, total).toLocaleString('en')}`;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" class="secondary" disabled={skip === 0} onClick={() => onSkip(Math.max(0, skip - take))}>
        Previous page
      </button>
      <span class="pager-place">
        {shown} of {total.toLocaleString('en')}
        {counting ? '+' : ''}
        {pages > 1 ? (
          <span class="muted">
            {' '}
            · page {page} of {pages.toLocaleString('en')}
          </span>
        ) : null}
      </span>
      <button type="button" class="secondary" disabled={skip + take >= total && !counting} onClick={() => onSkip(skip + take)}>
        Next page
      </button>
    </nav>
  );
}

/**
 * A panel beside the list it belongs to (below the header on a phone, as a sheet over the bottom of
 * the screen), so what was opened is in view without scrolling. It takes focus when it opens.
 */
export function SidePanel({
  id,
  title,
  onClose,
  children,
}: {
  id: string;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLElement>(null);
  // It is already in view (sticky, or a sheet on a phone): focusing must not scroll the page.
  useEffect(() => ref.current?.focus({ preventScroll: true }), [title]);
  return (
    <aside class="side-panel" aria-labelledby={id} tabIndex={-1} ref={ref} onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <div class="side-panel-head">
        <h2 id={id}>{title}</h2>
        <button type="button" class="secondary small" onClick={onClose}>
          Close
        </button>
      </div>
      {children}
    </aside>
  );
}

/** A labelled password box; `autocomplete` tells password managers whether it is the current or a new one. */
export function PasswordField(props: {
  label: string;
  name: string;
  autocomplete: 'current-password' | 'new-password';
  value: string;
  onValue: (value: string) => void;
}) {
  return (
    <label>
      {props.label}
      <input
        name={props.name}
        type="password"
        autocomplete={props.autocomplete}
        required
        value={props.value}
        onInput={(e) => props.onValue(e.currentTarget.value)}
      />
    </label>
  );
}

/**
 * A button for what cannot be undone: the first press asks, in place, and only the second does it
 * (the browser's confirm() box is not used anywhere).
 */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  onConfirm,
  small = false,
}: {
  label: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => void;
  small?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const size = small ? ' small' : '';
  if (!asking)
    return (
      <button type="button" class={`danger${size}`} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        type="button"
        class={`danger${size}`}
        ref={(button) => button?.focus()}
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" class={`secondary${size}`} onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
