// A forgotten password: ask for a link by e-mail (#/forgot), then choose a new password on the page the
// link opens (#/reset/<token>; the token stays in the fragment, which is never sent to a server).
import { useState } from 'preact/hooks';
import { ApiFailure, call, errorText } from '../api';
import { BrandMark } from '../icons';
import { href } from '../router';
import { endSession } from '../session';
import { PasswordField, Status } from '../ui';

/** The login page's query after a reset, so it says why the person is there. */
export const PASSWORD_SET = 'passwordSet';
export const PASSWORD_SET_NOTICE = 'Your password is set, and every earlier session has ended. Log in with the new password.';

export function Forgot() {
  const [email, setEmail] = useState('');
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const { message } = await call<{ message: string }>('/control/v2/auth/passwordReset', {
        method: 'POST',
        body: { email },
        anonymous: true,
      });
      setStatus({ message });
    } catch (e) {
      setStatus({ error: errorText(e) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="login panel" aria-labelledby="forgot-title">
      <BrandMark />
      <h1 id="forgot-title">Forgot your password?</h1>
      <p>
        Enter the e-mail address of this data store’s owner. A link to choose a new password is mailed there; it works once, for 24 hours.
      </p>
      <form onSubmit={submit}>
        <label>
          E-mail address
          <input name="email" type="email" autocomplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Send the link
        </button>
      </form>
      <p>
        <a href={href('files')}>Back to log in</a>
      </p>
      <Status {...status} />
    </section>
  );
}

export function Reset({ token }: { token: string }) {
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (password !== repeat) return setError('The two passwords differ.');
    setBusy(true);
    setError(undefined);
    try {
      await call('/control/v2/auth/passwordreset/confirm/' + encodeURIComponent(token), {
        method: 'POST',
        body: { newPassword: password },
        anonymous: true,
      });
      // Whatever session this browser had is over too; the token leaves the address bar.
      endSession();
      location.replace(`#/files?${PASSWORD_SET}`);
    } catch (e) {
      setError(
        e instanceof ApiFailure && e.status === 401
          ? 'This link has been used, has expired, or a newer one was sent. Ask for a new one.'
          : errorText(e),
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="login panel" aria-labelledby="reset-title">
      <BrandMark />
      <h1 id="reset-title">Choose a new password</h1>
      <p class="muted">{location.hostname}</p>
      <form onSubmit={submit}>
        <PasswordField label="New password" name="newPassword" autocomplete="new-password" value={password} onValue={setPassword} />
        <PasswordField label="The same again" name="repeat" autocomplete="new-password" value={repeat} onValue={setRepeat} />
        <button type="submit" disabled={busy}>
          Set the password
        </button>
      </form>
      <p>
        <a href={href('forgot')}>Ask for a new link</a>
      </p>
      <Status error={error} />
    </section>
  );
}
