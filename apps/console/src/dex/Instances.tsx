// The certified clusters, each with how many of its instances are in each state, and the instances
// themselves: registered, registering, with a changed key, or retired by their cluster, each with its
// key's fingerprint (the `kid` of its tokens), found by address, cluster or state, a page at a time.
import { useEffect, useState } from 'preact/hooks';
import { ScreenTitle, shortDate, Status, useLatestRead } from '../ui';
import { dex, failureText, type Instance } from './api';
import { INSTANCE_WORDS } from './words';

/** Rows asked for at once; "Show more" asks for the next ones. */
const TAKE = 100;

interface Clusters {
  clusters: string[];
  counts: { cluster: string; state: Instance['state']; count: number }[];
}

interface InstancePage {
  instances: Instance[];
  total: number;
  next?: string;
}

export function Instances() {
  const [clusters, setClusters] = useState<Clusters>();
  const [page, setPage] = useState<InstancePage>();
  const [error, setError] = useState<string>();
  const [q, setQ] = useState('');
  const [cluster, setCluster] = useState('');
  const [state, setState] = useState('');
  useEffect(() => {
    dex<Clusters>('/api/admin/clusters').then(setClusters, (e: unknown) => setError(failureText(e)));
  }, []);
  // The instances are found by dex, a page at a time: a cluster may hold millions.
  const begin = useLatestRead();
  const load = async (after?: string) => {
    const current = begin(after !== undefined);
    const params = new URLSearchParams({ take: String(TAKE) });
    if (q.trim()) params.set('find', q.trim());
    if (cluster) params.set('cluster', cluster);
    if (state) params.set('state', state);
    if (after) params.set('after', after);
    try {
      const next = await dex<InstancePage>(`/api/admin/instances?${params}`);
      if (!current()) return;
      setPage((shown) => (after && shown ? { ...next, instances: [...shown.instances, ...next.instances] } : next));
    } catch (e) {
      if (current()) setError(failureText(e));
    }
  };
  // A find typed fast asks once, after the typing stops.
  useEffect(() => {
    const timer = setTimeout(() => void load(), 200);
    return () => clearTimeout(timer);
  }, [q, cluster, state]);
  if (!clusters || !page) return <Status error={error} message={error ? undefined : 'Loading…'} />;

  const count = (domain: string, s: string) => clusters.counts.find((c) => c.cluster === domain && c.state === s)?.count ?? 0;
  const matching = page.instances;
  return (
    <section aria-labelledby="instances-title">
      <ScreenTitle id="instances-title">Clusters and instances</ScreenTitle>
      <section class="card" aria-labelledby="clusters-title">
        <h2 id="clusters-title">Certified clusters</h2>
        <p class="muted small">Instances under these domains may register with dex and receive its apps.</p>
        <ul class="plain">
          {clusters.clusters.map((domain) => (
            <li key={domain}>
              <strong>{domain}</strong>{' '}
              <span class="muted">
                {count(domain, 'registered')} registered
                {count(domain, 'pending') ? `, ${count(domain, 'pending')} registering` : ''}
                {count(domain, 'key-mismatch') ? `, ${count(domain, 'key-mismatch')} with a changed key` : ''}
                {count(domain, 'retired') ? `, ${count(domain, 'retired')} retired` : ''}
              </span>
            </li>
          ))}
        </ul>
      </section>
      <div class="screen-head">
        <h2>Instances</h2>
        <p class="summary muted">
          {page.total.toLocaleString('en')} {q || cluster || state ? 'matching' : 'in all'}
        </p>
      </div>
      <form class="inline" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Find by address
          <input type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        </label>
        <label>
          Cluster
          <select value={cluster} onChange={(e) => setCluster(e.currentTarget.value)}>
            <option value="">Any</option>
            {clusters.clusters.map((domain) => (
              <option key={domain} value={domain}>
                {domain}
              </option>
            ))}
          </select>
        </label>
        <label>
          State
          <select value={state} onChange={(e) => setState(e.currentTarget.value)}>
            <option value="">Any</option>
            {Object.entries(INSTANCE_WORDS).map(([value, words]) => (
              <option key={value} value={value}>
                {words}
              </option>
            ))}
          </select>
        </label>
      </form>
      {matching.length === 0 ? <p class="empty">No instance matches.</p> : null}
      {matching.length > 0 ? (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="The instances">
          <table class="dex-instances">
            <thead>
              <tr>
                <th scope="col">Address</th>
                <th scope="col">State</th>
                <th scope="col">Key fingerprint</th>
                <th scope="col">Since</th>
              </tr>
            </thead>
            <tbody>
              {matching.map((i) => (
                <tr key={i.address}>
                  <td>
                    {i.address}
                    <div class="muted small">{i.cluster}</div>
                  </td>
                  <td>
                    <span class={i.state === 'registered' ? 'badge running' : i.state === 'key-mismatch' ? 'badge failing' : 'badge'}>
                      {INSTANCE_WORDS[i.state] ?? i.state}
                    </span>
                  </td>
                  <td>{i.fingerprint ? <code class="fingerprint">{i.fingerprint}</code> : <span class="muted">None kept</span>}</td>
                  <td>{i.retiredAt ? `Retired ${shortDate(i.retiredAt)}` : shortDate(i.registeredAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Status error={error} />
      {page.next ? (
        <button type="button" class="secondary" onClick={() => void load(page.next)}>
          Show more ({(page.total - matching.length).toLocaleString('en')} not shown)
        </button>
      ) : null}
    </section>
  );
}
