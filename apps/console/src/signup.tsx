// The bare cluster domain's page: create an instance (POST /api/signup), then go to it.
import { render } from 'preact';
import { useState } from 'preact/hooks';
import { call, errorText } from './api';
import './style.css';
import { Status } from './ui';

const FIELDS = [
  ['fullName', 'Full name', 'text', 'name'],
  ['username', 'Username (your address)', 'text', 'username'],
  ['email', 'Email', 'email', 'email'],
  ['pass', 'Password', 'password', 'new-password'],
  ['passRepeat', 'Password again', 'password', 'new-password'],
] as const;

type Form = Record<(typeof FIELDS)[number][0], string>;

/** The instance's address as a browser reaches it: same scheme and port as this page. */
export const instanceAddress = (instance: string) => `${location.protocol}//${instance}${location.port ? `:${location.port}` : ''}/`;

function Signup() {
  const [form, setForm] = useState<Form>({ fullName: '', username: '', email: '', pass: '', passRepeat: '' });
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const [created, setCreated] = useState<string>();

  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      const { instance } = await call<{ instance: string }>('/api/signup', { method: 'POST', body: form, anonymous: true });
      setCreated(instanceAddress(instance));
      setStatus({ message: `Created ${instance}. Taking you there…` });
      setTimeout(() => location.assign(instanceAddress(instance)), 1500);
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };

  return (
    <main id="main" class="narrow">
      <h1>Create your personal data store</h1>
      <p>
        Your data store lives at{' '}
        <strong>
          {form.username || 'name'}.{location.hostname}
        </strong>
        . Only you decide who sees what is in it.
      </p>
      <form onSubmit={submit}>
        {FIELDS.map(([key, label, type, autocomplete]) => (
          <label key={key}>
            {label}
            <input
              name={key}
              type={type as 'text'}
              autocomplete={autocomplete}
              required
              value={form[key]}
              onInput={(e) => setForm({ ...form, [key]: e.currentTarget.value })}
            />
          </label>
        ))}
        <button type="submit" disabled={created !== undefined}>
          Create my data store
        </button>
      </form>
      <Status {...status} />
      {created ? (
        <p>
          <a href={created}>Go to {created}</a>
        </p>
      ) : null}
    </main>
  );
}

render(<Signup />, document.getElementById('root') as HTMLElement);
