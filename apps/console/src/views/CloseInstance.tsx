// Owner only: closing the instance (its erasure) and, while it is closing, the one screen the console
// still shows — the date everything is erased, the download of all the data, and the cancel. The
// server refuses every other call then.
import { useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { href } from '../router';
import { endSession } from '../session';
import { ScreenTitle, Status } from '../ui';
import { DownloadAll } from './Portability';

export const CLOSE = '/api/v2.6/instance/close';

export interface CloseState {
  state: 'active' | 'suspended' | 'closing';
  closeAfter?: string;
}

/** The closing state of the instance; null when it cannot be read (the console then shows its screens as usual). */
export const closeState = () => call<CloseState>(CLOSE).catch(() => null);

const day = (iso: string | undefined) => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'full', timeStyle: 'short' }) : '');

/** The screen that starts the closing: what it does, the password again, and a box to tick. */
export function CloseInstance({ onClosed }: { onClosed(state: CloseState): void }) {
  const [password, setPassword] = useState('');
  const [understood, setUnderstood] = useState(false);
  const [status, setStatus] = useState<{ error?: string }>({});
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      onClosed(await call<CloseState>(CLOSE, { method: 'POST', body: { password } }));
    } catch (e) {
      setStatus({ error: (e as { status?: number }).status === 403 ? 'That password is not right. Nothing was closed.' : errorText(e) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="close-title" class="close-instance">
      <div class="screen-head">
        <ScreenTitle id="close-title">Close your instance</ScreenTitle>
      </div>
      <div class="panel warning" role="note">
        <p>
          <strong>Closing erases everything in {location.hostname}</strong>: every file, every record, every app and every account you made,
          and its keys. The address is retired and can never be used again, by you or anyone.
        </p>
        <p>
          From the moment you confirm, nobody can use it — not your apps, not the people you shared with. Only you can still log in, to
          cancel. After the grace period (a week unless your provider says otherwise) the erasure begins and cannot be undone.
        </p>
      </div>
      <form onSubmit={submit} class="panel">
        <label for="close-password">Your password</label>
        <input
          id="close-password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        <label class="checkbox">
          <input type="checkbox" checked={understood} onChange={(e) => setUnderstood(e.currentTarget.checked)} />I understand that all my
          data will be erased after the grace period
        </label>
        <Status {...status} />
        <div class="actions">
          <button type="submit" class="danger" disabled={!understood || !password || busy}>
            Close my instance
          </button>
          <a class="button secondary" href={href('profile')}>
            Keep it
          </a>
        </div>
      </form>
    </section>
  );
}

/** All the console shows while the instance is closing: the erasure date, and the way back. */
export function Closing({ state, onCancelled }: { state: CloseState; onCancelled(): void }) {
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const cancel = async () => {
    try {
      await call<CloseState>(`${CLOSE}/cancel`, { method: 'POST' });
      onCancelled();
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };
  return (
    <section aria-labelledby="closing-title" class="close-instance">
      <ScreenTitle id="closing-title">Your instance is closing</ScreenTitle>
      <div class="panel warning" role="note">
        <p>
          Nobody can use {location.hostname} any more. On <strong>{day(state.closeAfter)}</strong> everything in it is erased and the
          address is retired for good.
        </p>
        <p>Changed your mind? Cancel before then and everything works again, for you, your apps and the people you shared with.</p>
      </div>
      <DownloadAll />
      <Status {...status} />
      <div class="actions">
        <button type="button" onClick={() => void cancel()}>
          Cancel closing, keep my instance
        </button>
        <button type="button" class="secondary" onClick={() => endSession()}>
          Log out
        </button>
      </div>
    </section>
  );
}
