// A staff console's log-in: an account (a name or address, and a password) or, switched to, a token; the
// session it opens is an HttpOnly cookie the page never sees.
import { useState } from 'preact/hooks';
import { Status } from '../ui';
import type { StaffApi } from './api';

export interface LogInWords {
  title: string;
  intro: string;
  /** The account's name field: its label, and its member in the log-in's body (`name`, `address`). */
  name: { label: string; key: string; placeholder?: string };
  /** The token instead: its label, its member in the body, and the words that switch to and from it. */
  token: { label: string; key: string; use: string; back: string };
}

export function StaffLogIn({ api, words, onIn }: { api: StaffApi; words: LogInWords; onIn: (actor: string) => void }) {
  const [withToken, setWithToken] = useState(false);
  const [name, setName] = useState('');
  const [secret, setSecret] = useState('');
  const [error, setError] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const body = withToken ? { [words.token.key]: secret } : { [words.name.key]: name.trim(), password: secret };
      const { actor } = await api.call<{ actor: string }>(api.sessionPath, { method: 'POST', body });
      onIn(actor);
    } catch (failure) {
      setError(api.failureText(failure));
    }
  };
  return (
    <section class="login" aria-labelledby="login-title">
      <h1 id="login-title">{words.title}</h1>
      <p class="muted">{words.intro}</p>
      <form onSubmit={(e) => void submit(e)}>
        {withToken ? null : (
          <label>
            {words.name.label}
            <input
              name={words.name.key}
              autocomplete="username"
              autocapitalize="none"
              spellcheck={false}
              placeholder={words.name.placeholder}
              required
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </label>
        )}
        <label>
          {withToken ? words.token.label : 'Password'}
          <input
            name="secret"
            type="password"
            autocomplete={withToken ? 'off' : 'current-password'}
            required
            value={secret}
            onInput={(e) => setSecret(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Log in</button>
      </form>
      <p>
        <button type="button" class="link" onClick={() => setWithToken(!withToken)}>
          {withToken ? words.token.back : words.token.use}
        </button>
      </p>
      <Status error={error} />
    </section>
  );
}
