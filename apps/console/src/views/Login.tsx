import { useState } from 'preact/hooks';
import { errorText, logIn } from '../api';
import { Status } from '../ui';

/** Username and password for this instance; `heading` lets #/hatlogin say which app asks. */
export function Login({ heading = 'Log in', intro }: { heading?: string; intro?: string }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await logIn(username, password);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="login" aria-labelledby="login-title">
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
        <button type="submit" disabled={busy}>
          Log in
        </button>
      </form>
      <Status error={error} />
    </section>
  );
}
