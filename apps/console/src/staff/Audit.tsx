// A staff console's audit: every action of its people, newest first, with who, when, what, on what, from
// where and the answer; found by what it acted on; downloaded whole as JSON lines.
import { useEffect, useState } from 'preact/hooks';
import { formatDate, ScreenTitle, Status } from '../ui';
import type { AuditEntry, StaffApi } from './api';

const TAKE = 100;

export interface AuditProps {
  api: StaffApi;
  /** The audit's listing (`…?take=&before=&target=`); its export is `${path}/export`. */
  path: string;
  /** An entry's action in words ("instance.suspend" → "Suspend"). */
  actionName(entry: AuditEntry): string;
  actorName(actor: string): string;
  /** The find field's label: what `target` names in this console. */
  findLabel: string;
  /** The downloaded file's name. */
  file: string;
}

const detailWords = (details: Record<string, unknown> | undefined) =>
  details
    ? Object.entries(details)
        .map(([name, value]) => `${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
        .join(', ')
    : '';

export function Audit({ api, path, actionName, actorName, findLabel, file }: AuditProps) {
  const [filter, setFilter] = useState('');
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<string>();
  const query = (before?: number) => {
    const params = new URLSearchParams({ take: String(TAKE) });
    if (filter.trim()) params.set('target', filter.trim());
    if (before) params.set('before', String(before));
    return params;
  };
  const load = async (before?: number) => {
    try {
      const page = await api.call<{ entries: AuditEntry[] }>(`${path}?${query(before)}`);
      setEntries((shown) => (before ? [...shown, ...page.entries] : page.entries));
      setMore(page.entries.length === TAKE);
    } catch (e) {
      setError(api.failureText(e));
    }
  };
  useEffect(() => {
    const timer = setTimeout(() => void load(), 200);
    return () => clearTimeout(timer);
  }, [filter]);
  const exportQuery = filter.trim() ? `?target=${encodeURIComponent(filter.trim())}` : '';
  return (
    <section aria-labelledby="audit-title">
      <div class="screen-head">
        <ScreenTitle id="audit-title">Audit</ScreenTitle>
        <a class="button secondary" href={`${path}/export${exportQuery}`} download={file}>
          Download as JSON lines
        </a>
      </div>
      <form class="inline" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          {findLabel}
          <input type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
        </label>
      </form>
      <Status error={error} />
      {entries.length === 0 ? <p class="empty">Nothing recorded yet.</p> : null}
      <ol class="plain audit">
        {entries.map((entry) => (
          <li key={entry.id} class={entry.status >= 400 ? 'refused' : undefined}>
            <div>
              <strong>{actionName(entry)}</strong> {entry.target ? <span>{entry.target}</span> : null}{' '}
              <span class={entry.status >= 400 ? 'badge failing' : 'badge running'}>
                {entry.status >= 400 ? `refused (${entry.status})` : 'done'}
              </span>
            </div>
            <div class="muted small">
              {actorName(entry.actor)} from {entry.client}, {formatDate(entry.at)}
            </div>
            {entry.details ? <div class="small">{detailWords(entry.details)}</div> : null}
          </li>
        ))}
      </ol>
      {more ? (
        <button type="button" class="secondary" onClick={() => void load(entries.at(-1)?.id)}>
          Show older
        </button>
      ) : null}
    </section>
  );
}
