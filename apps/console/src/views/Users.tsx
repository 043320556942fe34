// Owner only: the accounts of this instance; create, disable, enable, delete.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import type { UserAccount } from '../types';
import { formatDate, ScreenTitle, Status } from '../ui';

const EMPTY = { username: '', email: '', fullName: '', password: '' };

export function Users() {
  const [users, setUsers] = useState<UserAccount[]>();
  const [form, setForm] = useState(EMPTY);
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const load = () => call<UserAccount[]>('/users/user').then(setUsers, (e: unknown) => setStatus({ error: errorText(e) }));
  useEffect(() => void load(), []);

  const run = async (work: () => Promise<unknown>, message: string) => {
    try {
      await work();
      setStatus({ message });
      await load();
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };

  const create = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      await call('/users/user', {
        method: 'POST',
        body: { username: form.username, email: form.email || undefined, fullName: form.fullName || undefined, pass: form.password },
      });
      setForm(EMPTY);
    }, `User ${form.username} created`);
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

  return (
    <section aria-labelledby="users-title">
      <ScreenTitle>Users</ScreenTitle>
      <form onSubmit={create} aria-label="New user">
        <h2>New user</h2>
        {input('username', 'Username', 'text', true)}
        {input('fullName', 'Full name')}
        {input('email', 'Email', 'email')}
        {input('password', 'Password', 'password', true)}
        <button type="submit">Create user</button>
      </form>
      <Status {...status} />
      <table>
        <thead>
          <tr>
            <th scope="col">Username</th>
            <th scope="col">Kind</th>
            <th scope="col">State</th>
            <th scope="col">Created</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(users ?? []).map((user) => (
            <tr key={user.userId}>
              <td data-label="Username">{user.username}</td>
              <td data-label="Kind">{user.kind}</td>
              <td data-label="State">{user.enabled ? 'Enabled' : 'Disabled'}</td>
              <td data-label="Created">{formatDate(user.createdAt)}</td>
              <td data-label="Actions">
                {user.kind === 'user' ? (
                  <div class="actions">
                    <button
                      type="button"
                      class="secondary"
                      onClick={() =>
                        void run(
                          () => call(`/users/user/${user.userId}/${user.enabled ? 'disable' : 'enable'}`, { method: 'PUT' }),
                          `${user.username} ${user.enabled ? 'disabled' : 'enabled'}`,
                        )
                      }
                    >
                      {user.enabled ? 'Disable' : 'Enable'} {user.username}
                    </button>
                    <button
                      type="button"
                      class="danger"
                      onClick={() =>
                        confirm(`Delete ${user.username}?`) &&
                        void run(() => call(`/users/user/${user.userId}`, { method: 'DELETE' }), `${user.username} deleted`)
                      }
                    >
                      Delete {user.username}
                    </button>
                  </div>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
