import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, errorText, logIn, waitWords } from '../api';
import { BrandMark } from '../icons';
import { href } from '../router';
import { PasswordField, Status } from '../ui';

/** What the login page says after the server ended the session of this tab. */
export const SESSION_ENDED_NOTICE =
  'You were logged out: your session ended, because the password was changed or someone chose “Log out everywhere”. Log in again.';

/** The cluster's sign-up page: the instance's address one label up, on the same scheme and port. */
export const signupAddress = () =>
  `${location.protocol}//${location.hostname.split('.').slice(1).join('.')}${location.port ? `:${location.port}` : ''}/`;

/** A 401 that asks for the second factor (the password was right). */
const needsCode = (error: unknown) => error instanceof ApiFailure && error.status === 401 && /code/i.test(error.message);

/** Why a login failed, in words: the server says only "Not Authenticated", a word about the code, or "Too Many Requests". */
function loginProblem(error: unknown, codeAsked: boolean): string {
  if (needsCode(error)) return codeAsked ? 'That code did not work. Enter the current one from your app, or a recovery code.' : '';
  if (error instanceof ApiFailure && error.status === 401) return 'Wrong username or password. Check both and try again.';
  if (error instanceof ApiFailure && error.status === 429)
    return `Too many attempts. For your safety, logging in is paused: try again ${waitWords(error.retryAfter)}.`;
  return errorText(error);
}

/** Username and password for this instance; `heading` lets #/hatlogin say which app asks. */
export function Login({ heading = 'Log in', intro, notice }: { heading?: string; intro?: string; notice?: string }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  // Shown once the server says the account has a second factor.
  const [code, setCode] = useState<string>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  // After a 429 the button waits as long as the server asked.
  const [pausedUntil, setPausedUntil] = useState(0);
  useEffect(() => {
    if (!pausedUntil) return;
    const timer = setTimeout(() => setPausedUntil(0), pausedUntil - Date.now());
    return () => clearTimeout(timer);
  }, [pausedUntil]);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await logIn(username, password, code);
    } catch (e) {
      setError(loginProblem(e, code !== undefined) || undefined);
      if (needsCode(e) && code === undefined) setCode('');
      if (e instanceof ApiFailure && e.status === 429) setPausedUntil(Date.now() + (e.retryAfter ?? 1) * 1000);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="login panel" aria-labelledby="login-title">
      <BrandMark />
      <h1 id="login-title">{heading}</h1>
      {intro ? <p>{intro}</p> : null}
      <p class="muted">{location.hostname}</p>
      {notice ? <p class="notice-line">{notice}</p> : null}
      <form onSubmit={submit}>
        <label>
          Username
          <input name="username" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        <PasswordField label="Password" name="password" autocomplete="current-password" value={password} onValue={setPassword} />
        {code !== undefined ? (
          <label>
            Code from your authenticator app (or a recovery code)
            <input
              name="totp"
              autocomplete="one-time-code"
              inputMode="numeric"
              required
              autoFocus
              value={code}
              onInput={(e) => setCode(e.currentTarget.value.trim())}
            />
          </label>
        ) : null}
        <button type="submit" disabled={busy || pausedUntil > 0}>
          Log in
        </button>
      </form>
      <Status error={error} />
      <p>
        <a href={href('forgot')}>Forgot your password?</a>
      </p>
      <p class="muted">
        Not yours? <a href={signupAddress()}>Create a data store of your own</a>
      </p>
    </section>
  );
}
