// Owner only: who changed or read what in the data store, as sentences by day ("Notes app read 120
// records of your diary, 3 times"), each with one time; filtered by app or person, by kind and by date.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { activityLines, dayHeading, dayOf, type ActivityEntry, type ActivityLine } from '../activity/words';
import type { UserAccount } from '../types';
import { ScreenTitle, Status, useLatestRead } from '../ui';
import { loadApps } from './Apps';

const KINDS: [string, string][] = [
  ['', 'Everything'],
  ['records.read', 'Data read by apps'],
  ['file.content', 'Files opened'],
  ['login', 'Log-ins'],
  ['login.failed', 'Failed log-ins'],
  ['record.', 'Data changed'],
  ['file.', 'Files changed'],
  ['link.used', 'Share links used'],
  ['link.', 'Share links'],
  ['app.', 'Apps'],
  ['debit.', 'Data debits'],
  ['user.', 'Accounts'],
];

const ALL = { actor: '', type: '', since: '', until: '' };
/** Entries read at a time; "Show earlier" reads the next ones back. */
const PAGE = 100;

/** The accounts to filter by, in words: apps by their title, people by their username. */
async function actors(): Promise<[string, string][]> {
  const [accounts, apps] = await Promise.all([call<UserAccount[]>('/users/user'), loadApps().catch(() => [])]);
  const title = (username: string) => apps.find((app) => `app:${app.id}` === username)?.name ?? username.replace(/^app:/, '');
  return accounts.map((a) => [a.userId, a.kind === 'owner' ? 'You' : a.kind === 'application' ? `${title(a.username)} (app)` : a.username]);
}

export function Activity() {
  const [who, setWho] = useState<[string, string][]>([]);
  const [filter, setFilter] = useState(ALL);
  const [entries, setEntries] = useState<ActivityEntry[]>();
  const [error, setError] = useState<string>();

  useEffect(() => void actors().then(setWho, () => undefined), []);
  const [more, setMore] = useState(false);
  const begin = useLatestRead();
  /** A page of entries (newest first); `before`: only those before that time (the next page back). */
  const read = async (before?: string) => {
    const current = begin(before !== undefined);
    const query = new URLSearchParams({ take: String(PAGE) });
    if (filter.actor) query.set('actor', filter.actor);
    if (filter.type) query.set('type', filter.type);
    if (filter.since) query.set('since', new Date(`${filter.since}T00:00:00`).toISOString());
    const until = before ?? (filter.until ? new Date(`${filter.until}T24:00:00`).toISOString() : undefined);
    if (until) query.set('until', until);
    try {
      const found = await call<ActivityEntry[]>(`/api/v2.6/activity?${query}`);
      if (!current()) return;
      setEntries((shown) => (before ? [...(shown ?? []), ...found] : found));
      setMore(found.length === PAGE);
      setError(undefined);
    } catch (e) {
      if (current()) setError(errorText(e));
    }
  };
  useEffect(() => void read(), [filter]);

  const set = (key: keyof typeof ALL) => (e: { currentTarget: { value: string } }) =>
    setFilter({ ...filter, [key]: e.currentTarget.value });
  const days = new Map<string, ActivityLine[]>();
  for (const line of activityLines(entries ?? [])) {
    const day = dayOf(line.time);
    days.set(day, [...(days.get(day) ?? []), line]);
  }

  return (
    <section aria-labelledby="activity-title" class="activity">
      <div class="screen-head">
        <ScreenTitle id="activity-title">Activity</ScreenTitle>
      </div>
      <p class="muted">What your apps, the people you share with, and you did in your data store.</p>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Who
          <select name="actor" value={filter.actor} onChange={set('actor')}>
            <option value="">Everyone</option>
            {who.map(([id, name]) => (
              <option key={id} value={id}>
                {name}
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
      {[...days].map(([day, lines]) => (
        <section key={day} aria-label={dayHeading(lines[0]?.time ?? day)}>
          <h2 class="activity-day">{dayHeading(lines[0]?.time ?? day)}</h2>
          <ul class="rows">
            {lines.map((line) => (
              <li key={line.key}>
                <span class="row-text">
                  {line.sentence}
                  {line.address ? <span class="muted"> · from {line.address}</span> : null}
                </span>
                <time dateTime={line.time}>
                  {new Date(line.time).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })}
                </time>
              </li>
            ))}
          </ul>
        </section>
      ))}
      {more && entries ? (
        <button type="button" class="secondary" onClick={() => void read(entries[entries.length - 1]?.time)}>
          Show earlier activity
        </button>
      ) : null}
    </section>
  );
}
