// Owner only: the accounts of this instance (people and apps); add, disable, enable, delete.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import type { UserAccount } from '../types';
import { ConfirmButton, countWords, runChange, ScreenTitle, shortDate, Status } from '../ui';

const EMPTY = { username: '', email: '', fullName: '', password: '' };

const KIND: Record<UserAccount['kind'], string> = { owner: 'Owner', user: 'Person', application: 'App' };

export function Users() {
  const [users, setUsers] = useState<UserAccount[]>();
  const [form, setForm] = useState(EMPTY);
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const load = () => call<UserAccount[]>('/users/user').then(setUsers, (e: unknown) => setStatus({ error: errorText(e) }));
  useEffect(() => void load(), []);

  const run = (work: () => Promise<unknown>, message: string) => runChange(work, message, setStatus, load);

  const create = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      await call('/users/user', {
        method: 'POST',
        body: { username: form.username, email: form.email || undefined, fullName: form.fullName || undefined, pass: form.password },
      });
      setForm(EMPTY);
    }, `Added ${form.username}: they log in here, at ${location.hostname}`);
  };

  const input = (key: keyof typeof EMPTY, label: string, type: 'text' | 'email' | 'password' = 'text', required = false) => (
    <label>
      {label}
      <input
        name={key}
        type={type as 'text'}
        required={required}
        autocomplete={type === 'password' ? 'new-password' : 'off'}
        value={form[key]}
        onInput={(e) => setForm({ ...form, [key]: e.currentTarget.value })}
      />
    </label>
  );

  const accounts = users ?? [];
  return (
    <section aria-labelledby="users-title">
      <div class="screen-head">
        <ScreenTitle id="users-title">Users</ScreenTitle>
        {users ? <p class="summary">{countWords(accounts.length, 'account')}</p> : null}
      </div>
      <p class="muted">People who log in to this data store and see what you share with them, and the accounts of your apps.</p>
      <Status {...status} />
      <ul class="rows users">
        {accounts.map((user) => (
          <li key={user.userId}>
            <div class="row-text">
              <strong>{user.username}</strong>
              <span class="muted">
                {[KIND[user.kind], user.fullName, user.enabled ? undefined : 'disabled', `added ${shortDate(user.createdAt)}`]
                  .filter(Boolean)
                  .join(' · ')}
              </span>
            </div>
            {user.kind === 'user' ? (
              <div class="actions">
                <button
                  type="button"
                  class="secondary small"
                  onClick={() =>
                    void run(
                      () => call(`/users/user/${user.userId}/${user.enabled ? 'disable' : 'enable'}`, { method: 'PUT' }),
                      user.enabled ? `${user.username} can no longer log in` : `${user.username} can log in again`,
                    )
                  }
                >
                  {user.enabled ? 'Disable' : 'Enable'} {user.username}
                </button>
                <ConfirmButton
                  small
                  label={`Delete ${user.username}`}
                  question="They lose access to everything you shared with them."
                  confirmLabel={`Delete ${user.username}`}
                  onConfirm={() => void run(() => call(`/users/user/${user.userId}`, { method: 'DELETE' }), `${user.username} deleted`)}
                />
              </div>
            ) : null}
          </li>
        ))}
      </ul>
      <form class="panel" onSubmit={create} aria-labelledby="new-user-title">
        <h2 id="new-user-title">Add a person</h2>
        <div class="fields">
          {input('username', 'Username', 'text', true)}
          {input('fullName', 'Full name')}
          {input('email', 'Email', 'email')}
          {input('password', 'Password', 'password', true)}
        </div>
        <button type="submit">Create user</button>
      </form>
    </section>
  );
}
