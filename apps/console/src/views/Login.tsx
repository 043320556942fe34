import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, errorText, logIn, waitWords } from '../api';
import { BrandMark } from '../icons';
import { Status } from '../ui';

/** Why a login failed, in words: the server says only "Not Authenticated" or "Too Many Requests". */
function loginProblem(error: unknown): string {
  if (error instanceof ApiFailure && error.status === 401) return 'Wrong username or password. Check both and try again.';
  if (error instanceof ApiFailure && error.status === 429)
    return `Too many attempts. For your safety, logging in is paused: try again ${waitWords(error.retryAfter)}.`;
  return errorText(error);
}

/** Username and password for this instance; `heading` lets #/hatlogin say which app asks. */
export function Login({ heading = 'Log in', intro }: { heading?: string; intro?: string }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
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
      await logIn(username, password);
    } catch (e) {
      setError(loginProblem(e));
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
      <form onSubmit={submit}>
        <label>
          Username
          <input name="username" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={busy || pausedUntil > 0}>
          Log in
        </button>
      </form>
      <Status error={error} />
    </section>
  );
}
