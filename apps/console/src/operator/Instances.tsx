// The instances: search by address or owner e-mail, filter by state, sort by creation, usage, last
// activity or state, page through them; each opens its own page.
import { useEffect, useState } from 'preact/hooks';
import { href } from '../router';
import { formatBytes, Pager, ScreenTitle, shortDate, Status } from '../ui';
import { admin, failureText, type Instance } from './api';
import { DEX_WORDS, STATE_WORDS } from './words';

const TAKE = 50;
const SORTS: [string, string][] = [
  ['created', 'Newest'],
  ['usage', 'Most storage used'],
  ['activity', 'Last active'],
  ['state', 'State'],
];

export function Instances({ query }: { query: URLSearchParams }) {
  const [q, setQ] = useState(query.get('q') ?? '');
  const [state, setState] = useState('');
  const [sort, setSort] = useState('created');
  const [skip, setSkip] = useState(0);
  const [page, setPage] = useState<{ total: number; instances: Instance[] }>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    const params = new URLSearchParams({ sort, skip: String(skip), take: String(TAKE) });
    if (q.trim()) params.set('q', q.trim());
    if (state) params.set('state', state);
    // A search typed fast asks once, after the typing stops; an answer to what was asked before comes too late to show.
    let current = true;
    const timer = setTimeout(() => {
      admin<{ total: number; instances: Instance[] }>(`/instances?${params}`).then(
        (found) => current && setPage(found),
        (e: unknown) => current && setError(failureText(e)),
      );
    }, 200);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [q, state, sort, skip]);

  return (
    <section aria-labelledby="instances-title">
      <div class="screen-head">
        <ScreenTitle id="instances-title">Instances</ScreenTitle>
        {page ? <p class="summary muted">{page.total.toLocaleString('en')} found</p> : null}
      </div>
      <form class="inline" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Find by address or owner e-mail
          <input
            type="search"
            value={q}
            onInput={(e) => {
              setQ(e.currentTarget.value);
              setSkip(0);
            }}
          />
        </label>
        <label>
          State
          <select
            value={state}
            onChange={(e) => {
              setState(e.currentTarget.value);
              setSkip(0);
            }}
          >
            <option value="">Any</option>
            <option value="active">Active</option>
            <option value="suspended">Suspended</option>
            <option value="closing">Closing</option>
          </select>
        </label>
        <label>
          Sort by
          <select
            value={sort}
            onChange={(e) => {
              setSort(e.currentTarget.value);
              setSkip(0);
            }}
          >
            {SORTS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </form>
      <Status error={error} />
      {page && page.instances.length === 0 ? <p class="empty">No instance matches.</p> : null}
      {page && page.instances.length > 0 ? (
        <div class="table-scroll">
          <table class="instances">
            <thead>
              <tr>
                <th scope="col">Address</th>
                <th scope="col">State</th>
                <th scope="col">Storage used</th>
                <th scope="col">Last active</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {page.instances.map((instance) => (
                <tr key={instance.address}>
                  <td>
                    <a href={href('instances', instance.address)}>{instance.address}</a>
                    {instance.ownerEmail ? <div class="muted small">{instance.ownerEmail}</div> : null}
                  </td>
                  <td>
                    <span class={`badge state-${instance.state}`}>{STATE_WORDS[instance.state]}</span>
                    {instance.dexState !== 'registered' ? <div class="muted small">{DEX_WORDS[instance.dexState]}</div> : null}
                  </td>
                  <td>{formatBytes(instance.usage.fileBytes + instance.usage.recordBytes)}</td>
                  <td>{instance.lastActiveAt ? shortDate(instance.lastActiveAt) : 'Never'}</td>
                  <td>{shortDate(instance.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {page ? <Pager label="Pages of instances" skip={skip} take={TAKE} total={page.total} onSkip={setSkip} /> : null}
    </section>
  );
}
