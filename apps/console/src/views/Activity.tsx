// Owner only: who changed or read what, and when (GET /api/v2.6/activity), filtered by account, kind and date.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import type { UserAccount } from '../types';
import { ScreenTitle, shortDate, Status } from '../ui';

export interface ActivityEntry {
  kind: 'change' | 'read';
  type: string;
  actor: { kind: string; id: string | null };
  object: Record<string, unknown>;
  address: string | null;
  /** Identical reads within a second are one entry that counts them. */
  times: number;
  time: string;
}

const KINDS: [string, string][] = [
  ['', 'Everything'],
  ['records.read', 'Records read'],
  ['file.content', 'File content read'],
  ['debit.values', 'Data debit values read'],
  ['login', 'Log-ins'],
  ['login.failed', 'Failed log-ins'],
  ['app.token', 'App tokens issued'],
  ['record.', 'Record changes'],
  ['file.', 'File changes'],
  ['app.', 'App changes'],
  ['debit.', 'Data debit changes'],
  ['user.', 'Account changes'],
];

/** "read 120 records of fitness/steps", "read the content of x.jpg 3 times": what one entry says happened. */
export function describe(entry: ActivityEntry): string {
  const said = what(entry);
  return entry.times > 1 && entry.type !== 'records.read' ? `${said} ${entry.times} times` : said;
}

function what(entry: ActivityEntry): string {
  const o = entry.object;
  const table = `${String(o.namespace)}/${String(o.endpoint)}`;
  switch (entry.type) {
    case 'records.read':
      return o.recordId ? `read record ${String(o.recordId)}` : `read ${String(o.count)} records of ${table}`;
    case 'file.content':
      return `read the content of ${String(o.fileId)}`;
    case 'debit.values':
      return `read the values of data debit ${String(o.debitKey)}`;
    case 'login':
      return 'logged in';
    case 'login.failed':
      return `failed to log in as ${String(o.username)}`;
    case 'app.token':
      return `was given a token for app ${String(o.appId)}`;
    default: {
      const [what = '', verb = ''] = entry.type.split('.');
      const target =
        what === 'record' ? `a record of ${table}` : what === 'file' ? String(o.fileId) : String(o.appId ?? o.debitKey ?? o.username ?? '');
      return `${verb.replace(/_/g, ' ')} ${what === 'record' ? '' : `${what} `}${target}`.trim();
    }
  }
}

const ALL = { actor: '', type: '', since: '', until: '' };

export function Activity() {
  const [accounts, setAccounts] = useState<UserAccount[]>([]);
  const [filter, setFilter] = useState(ALL);
  const [entries, setEntries] = useState<ActivityEntry[]>();
  const [error, setError] = useState<string>();

  useEffect(() => void call<UserAccount[]>('/users/user').then(setAccounts, () => undefined), []);
  useEffect(() => {
    const query = new URLSearchParams({ take: '200' });
    if (filter.actor) query.set('actor', filter.actor);
    if (filter.type) query.set('type', filter.type);
    if (filter.since) query.set('since', new Date(`${filter.since}T00:00:00`).toISOString());
    if (filter.until) query.set('until', new Date(`${filter.until}T24:00:00`).toISOString());
    call<ActivityEntry[]>(`/api/v2.6/activity?${query}`).then(
      (found) => {
        setEntries(found);
        setError(undefined);
      },
      (e: unknown) => setError(errorText(e)),
    );
  }, [filter]);

  const nameOf = (actor: ActivityEntry['actor']) =>
    actor.id ? (accounts.find((a) => a.userId === actor.id)?.username ?? actor.kind) : actor.kind === 'system' ? 'The system' : actor.kind;
  const set = (key: keyof typeof ALL) => (e: { currentTarget: { value: string } }) =>
    setFilter({ ...filter, [key]: e.currentTarget.value });

  return (
    <section aria-labelledby="activity-title">
      <div class="screen-head">
        <ScreenTitle id="activity-title">Activity</ScreenTitle>
      </div>
      <p class="muted">Who changed or read what in your data store, and when: your apps, the people you share with, and you.</p>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Who
          <select name="actor" value={filter.actor} onChange={set('actor')}>
            <option value="">Anyone</option>
            {accounts.map((a) => (
              <option key={a.userId} value={a.userId}>
                {a.username} ({a.kind === 'application' ? 'app' : a.kind})
              </option>
            ))}
          </select>
        </label>
        <label>
          What
          <select name="type" value={filter.type} onChange={set('type')}>
            {KINDS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          From
          <input name="since" type="date" value={filter.since} onChange={set('since')} />
        </label>
        <label>
          To
          <input name="until" type="date" value={filter.until} onChange={set('until')} />
        </label>
      </form>
      <Status error={error} message={entries ? undefined : 'Loading…'} />
      {entries && entries.length === 0 ? <p class="empty">Nothing happened that matches.</p> : null}
      <ul class="rows activity">
        {(entries ?? []).map((entry, i) => (
          <li key={`${entry.time}-${i}`}>
            <div class="row-text">
              <strong>
                {nameOf(entry.actor)} {describe(entry)}
              </strong>
              <span class="muted">
                {[shortDate(entry.time), new Date(entry.time).toLocaleTimeString(), entry.address ? `from ${entry.address}` : undefined]
                  .filter(Boolean)
                  .join(' · ')}
              </span>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
