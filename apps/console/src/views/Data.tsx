// Data tables: namespaces → endpoints → records (a table with the total, paging, and the JSON of one
// record in a panel beside it), delete.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import type { ConsoleApp } from '../apps';
import { countRecords, readRecords, tablePath } from '../records';
import { href } from '../router';
import type { DataRecord, DataSources } from '../types';
import { ConfirmButton, countWords, Pager, ScreenTitle, SidePanel, Status } from '../ui';
import { AppLogo, loadApps } from './Apps';

const PAGE = 20;

/** What each namespace is, in the words of the app that keeps it (its title and description), when one does. */
function useApps(): Map<string, ConsoleApp> {
  const [apps, setApps] = useState<ConsoleApp[]>([]);
  useEffect(() => void loadApps().then(setApps, () => undefined), []);
  // An app writes its own namespace (its one write grant).
  return new Map(apps.flatMap((app) => app.writes.map((namespace): [string, ConsoleApp] => [namespace, app])));
}

function Tables() {
  const [sources, setSources] = useState<DataSources>();
  const [error, setError] = useState<string>();
  const apps = useApps();
  useEffect(() => void call<DataSources>('/api/v2.6/data/sources').then(setSources, (e: unknown) => setError(errorText(e))), []);
  const namespaces = Object.keys(sources ?? {}).sort();
  return (
    <section aria-labelledby="data-title">
      <div class="screen-head">
        <ScreenTitle id="data-title">Data</ScreenTitle>
      </div>
      <p class="muted">What your apps keep in your data store, in their own words. Open a kind of data to see every record of it.</p>
      <Status error={error} message={sources ? undefined : 'Loading…'} />
      {sources && namespaces.length === 0 ? (
        <p class="empty">No data yet. Once you set up an app, what it keeps for you shows here.</p>
      ) : null}
      <div class="sources">
        {namespaces.map((namespace) => {
          const app = apps.get(namespace);
          const title = app?.name ?? namespace;
          return (
            <section key={namespace} class="panel" aria-labelledby={`ns-${namespace}`}>
              <div class="source-head">
                {app ? <AppLogo app={app} /> : null}
                <h2 id={`ns-${namespace}`}>{title}</h2>
              </div>
              <p class="muted">{app?.description || (app ? `What ${title} keeps for you.` : 'Kept by an app that is no longer here.')}</p>
              <ul class="endpoints">
                {(sources?.[namespace] ?? []).map((endpoint) => (
                  <li key={endpoint}>
                    <a href={href('data', namespace, ...endpoint.split('/'))} aria-label={`${title}: ${words(endpoint)}`}>
                      {words(endpoint)}
                    </a>
                  </li>
                ))}
              </ul>
            </section>
          );
        })}
      </div>
    </section>
  );
}

/** "dailySteps" or "daily-steps" → "Daily steps": a table's name as a word. */
const words = (endpoint: string) =>
  endpoint
    .replace(/[-_/]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .replace(/^./, (c) => c.toUpperCase());

/** The first level of keys of the page's records, as table columns (a few, to stay readable). */
function columnsOf(records: DataRecord[]): string[] {
  const keys = new Set<string>();
  for (const record of records) {
    if (record.data && typeof record.data === 'object' && !Array.isArray(record.data))
      Object.keys(record.data).forEach((key) => keys.add(key));
  }
  return [...keys].slice(0, 4);
}

const cell = (value: unknown) => (value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value));

function Records({ namespace, endpoint }: { namespace: string; endpoint: string }) {
  const path = tablePath(namespace, endpoint);
  const [skip, setSkip] = useState(0);
  const [records, setRecords] = useState<DataRecord[]>();
  const [count, setCount] = useState<number>();
  const [chosen, setChosen] = useState<DataRecord>();
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  // Bumped after a delete: the page and the count are read again.
  const [version, setVersion] = useState(0);
  const fail = (e: unknown) => setStatus({ error: errorText(e) });

  useEffect(() => void readRecords(path, skip, PAGE).then(setRecords, fail), [skip, version]);
  useEffect(() => void countRecords(namespace, endpoint).then(setCount, fail), [version]);

  const remove = async (record: DataRecord) => {
    try {
      await call(`/api/v2.6/data?records=${encodeURIComponent(record.recordId)}`, { method: 'DELETE' });
      setChosen(undefined);
      setStatus({ message: 'Record deleted' });
      setVersion((v) => v + 1);
    } catch (e) {
      fail(e);
    }
  };

  const columns = columnsOf(records ?? []);
  // Until the count is in, the page itself says how many there are at least.
  const total = Math.max(count ?? 0, skip + (records?.length ?? 0));
  return (
    <section aria-labelledby="records-title">
      <p>
        <a href={href('data')}>← All data</a>
      </p>
      <div class="screen-head">
        <ScreenTitle id="records-title">
          {namespace} / {endpoint}
        </ScreenTitle>
        {count !== undefined ? <p class="summary">{countWords(count, 'record')}</p> : null}
      </div>
      <Status {...status} message={status.message ?? (records ? undefined : 'Loading…')} />
      {records && records.length === 0 && skip === 0 ? <p class="empty">This table is empty.</p> : null}
      <div class={chosen ? 'with-panel' : undefined}>
        <div>
          {records && records.length > 0 ? (
            <div class="table-scroll">
              <table class="records">
                <thead>
                  <tr>
                    <th scope="col">Record</th>
                    {columns.map((column) => (
                      <th key={column} scope="col">
                        {column}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {records.map((record) => (
                    <tr key={record.recordId} class={chosen?.recordId === record.recordId ? 'selected' : undefined}>
                      <td>
                        <button type="button" class="link" onClick={() => setChosen(record)} aria-label={`Show record ${record.recordId}`}>
                          {record.recordId.slice(0, 8)}
                        </button>
                      </td>
                      {columns.map((column) => (
                        <td key={column}>{cell((record.data as Record<string, unknown>)?.[column])}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
          {records && total > 0 ? (
            <Pager label="Pages of records" skip={skip} take={PAGE} total={total} counting={count === undefined} onSkip={setSkip} />
          ) : null}
        </div>
        {chosen ? (
          <SidePanel id="record-title" title={`Record ${chosen.recordId.slice(0, 8)}`} onClose={() => setChosen(undefined)}>
            <pre tabIndex={0} aria-label="Record as JSON">
              {JSON.stringify(chosen.data, null, 2)}
            </pre>
            <ConfirmButton
              label="Delete record"
              question="It cannot be brought back."
              confirmLabel="Delete it"
              onConfirm={() => void remove(chosen)}
            />
          </SidePanel>
        ) : null}
      </div>
    </section>
  );
}

export function Data({ path }: { path: string[] }) {
  const [namespace, ...endpoint] = path;
  return namespace && endpoint.length ? <Records key={path.join('/')} namespace={namespace} endpoint={endpoint.join('/')} /> : <Tables />;
}
