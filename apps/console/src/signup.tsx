// The bare cluster domain's page: create an instance (POST /api/signup), then open it already logged
// in (the new owner's token is handed over in the address's fragment; see session.ts).
import { render } from 'preact';
import { useState } from 'preact/hooks';
import { ApiFailure, call, errorText, waitWords } from './api';
import { BrandMark } from './icons';
import { checkName } from './names';
import { handOverAddress } from './session';
import './style.css';
import { Status } from './ui';

const FIELDS = [
  ['fullName', 'Full name', 'text', 'name'],
  ['username', 'Username (your address)', 'text', 'username'],
  ['email', 'Email', 'email', 'email'],
  ['pass', 'Password', 'password', 'new-password'],
  ['passRepeat', 'Password again', 'password', 'new-password'],
] as const;

type Field = (typeof FIELDS)[number][0];
type Form = Record<Field, string>;

const HINTS: Partial<Record<Field, string>> = {
  username: '3 to 63 small letters, digits or -, starting with a letter',
  pass: 'At least 8 characters; a few unrelated words make a strong one',
};

/** The instance's address as a browser reaches it: same scheme and port as this page. */
export const instanceAddress = (instance: string) => `${location.protocol}//${instance}${location.port ? `:${location.port}` : ''}/`;

/** A 400's "username: must be …; pass: …" as a message per field, in words. */
function fieldProblems(message: string): Partial<Record<Field, string>> {
  const problems: Partial<Record<Field, string>> = {};
  for (const part of message.split('; ')) {
    const [field, problem] = part.split(/: (.*)/s) as [string, string | undefined];
    const known = FIELDS.find(([key]) => key === field);
    if (!known || !problem) continue;
    const label = known[1].replace(/ \(.*\)$/, '');
    problems[known[0]] = field === 'passRepeat' ? 'The two passwords differ.' : `${label} ${problem.replace(/\.$/, '')}.`;
  }
  return problems;
}

interface Problems {
  fields: Partial<Record<Field, string>>;
  error?: string;
  /** A free name, when the one asked for is taken. */
  suggestion?: string;
}

/** For someone who already has a data store here: its name takes them to its log-in page. */
function HaveOne() {
  const [name, setName] = useState('');
  return (
    <form
      class="have-one"
      aria-labelledby="have-one-title"
      onSubmit={(event) => {
        event.preventDefault();
        location.assign(instanceAddress(`${name.trim().toLowerCase()}.${location.hostname}`));
      }}
    >
      <h2 id="have-one-title">Already have a data store here?</h2>
      <div class="have-one-row">
        <label for="have-one-name" class="visually-hidden">
          Its name
        </label>
        <input
          id="have-one-name"
          name="existing"
          autocomplete="username"
          placeholder="name"
          required
          pattern="[A-Za-z][A-Za-z0-9\-]*"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <span class="muted">.{location.hostname}</span>
        <button type="submit" class="secondary">
          Log in
        </button>
      </div>
    </form>
  );
}

function Signup() {
  const [form, setForm] = useState<Form>({ fullName: '', username: '', email: '', pass: '', passRepeat: '' });
  const [problems, setProblems] = useState<Problems>({ fields: {} });
  const [message, setMessage] = useState<string>();
  const [busy, setBusy] = useState(false);

  /** Says the name is taken and offers a free one; false when it is free (or cannot be checked now). */
  const taken = async (): Promise<boolean> => {
    const check = await checkName(form.username, form.fullName).catch(() => undefined);
    if (!check || check.available) return false;
    const address = `${form.username}.${location.hostname}`;
    setProblems({ fields: { username: `${address} is taken.` }, suggestion: check.suggestions[0] });
    return true;
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    // Checked here first: every sign-up the server sees counts against this network's limit.
    if (form.pass !== form.passRepeat) return setProblems({ fields: { passRepeat: 'The two passwords differ.' } });
    setBusy(true);
    setProblems({ fields: {} });
    if (await taken()) return setBusy(false);
    try {
      const { instance, accessToken } = await call<{ instance: string; accessToken: string }>('/api/signup', {
        method: 'POST',
        body: form,
        anonymous: true,
      });
      setMessage(`Your data store ${instance} is ready. Taking you there…`);
      location.assign(handOverAddress(instanceAddress(instance), accessToken));
    } catch (e) {
      setBusy(false);
      // Taken between the check and the sign-up.
      if (e instanceof ApiFailure && e.status === 409 && (await taken())) return;
      if (e instanceof ApiFailure && e.status === 429)
        return setProblems({ fields: {}, error: `Too many sign-ups from your network. Try again ${waitWords(e.retryAfter)}.` });
      const fields = e instanceof ApiFailure && e.status === 400 ? fieldProblems(e.message) : {};
      setProblems(Object.keys(fields).length ? { fields } : { fields, error: errorText(e) });
    }
  };

  const described = (key: Field) =>
    [HINTS[key] ? `${key}-hint` : '', problems.fields[key] ? `${key}-problem` : ''].filter(Boolean).join(' ');

  return (
    <main id="main" class="narrow signup">
      <div class="panel">
        <BrandMark />
        <h1>Create your personal data store</h1>
        <p>
          Your data store will live at{' '}
          <strong>
            {form.username || 'name'}.{location.hostname}
          </strong>
          . Only you decide who sees what is in it.
        </p>
        <form onSubmit={submit}>
          {FIELDS.map(([key, label, type, autocomplete]) => (
            <div key={key} class="field">
              <label for={`signup-${key}`}>{label}</label>
              <input
                id={`signup-${key}`}
                name={key}
                type={type as 'text'}
                autocomplete={autocomplete}
                required
                value={form[key]}
                aria-invalid={problems.fields[key] ? true : undefined}
                aria-describedby={described(key) || undefined}
                onInput={(e) => {
                  const value = key === 'username' ? e.currentTarget.value.toLowerCase() : e.currentTarget.value;
                  setForm({ ...form, [key]: value });
                }}
              />
              {HINTS[key] ? (
                <span id={`${key}-hint`} class="hint">
                  {HINTS[key]}
                </span>
              ) : null}
              {problems.fields[key] ? (
                <span id={`${key}-problem`} class="error">
                  {problems.fields[key]}
                </span>
              ) : null}
              {key === 'username' && problems.suggestion ? (
                <button
                  type="button"
                  class="secondary suggestion"
                  onClick={() => {
                    setForm({ ...form, username: problems.suggestion as string });
                    setProblems({ fields: {} });
                  }}
                >
                  Use {problems.suggestion} instead
                </button>
              ) : null}
            </div>
          ))}
          <button type="submit" disabled={busy}>
            Create my data store
          </button>
        </form>
        <Status
          message={message}
          error={problems.error ?? (Object.keys(problems.fields).length ? 'Please check the fields marked above.' : undefined)}
        />
      </div>
      <div class="panel">
        <HaveOne />
      </div>
    </main>
  );
}

render(<Signup />, document.getElementById('root') as HTMLElement);
