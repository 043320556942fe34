// Data tables: namespaces → endpoints → records (a table and the JSON of one record), paging, delete.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { href } from '../router';
import type { DataRecord, DataSources } from '../types';
import { ScreenTitle, Status } from '../ui';

const PAGE = 20;

function Tables() {
  const [sources, setSources] = useState<DataSources>();
  const [error, setError] = useState<string>();
  useEffect(() => void call<DataSources>('/api/v2.6/data/sources').then(setSources, (e: unknown) => setError(errorText(e))), []);
  const namespaces = Object.keys(sources ?? {}).sort();
  return (
    <section aria-labelledby="data-title">
      <ScreenTitle>Data</ScreenTitle>
      <Status error={error} message={sources ? undefined : 'Loading…'} />
      {sources && namespaces.length === 0 ? <p class="muted">No data yet: apps write records here once they are set up.</p> : null}
      {namespaces.map((namespace) => (
        <section key={namespace} aria-labelledby={`ns-${namespace}`}>
          <h2 id={`ns-${namespace}`}>{namespace}</h2>
          <ul class="endpoints">
            {(sources?.[namespace] ?? []).map((endpoint) => (
              <li key={endpoint}>
                <a href={href('data', namespace, ...endpoint.split('/'))}>{endpoint}</a>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </section>
  );
}

/** The first level of keys of the page's records, as table columns (a few, to stay readable). */
function columnsOf(records: DataRecord[]): string[] {
  const keys = new Set<string>();
  for (const record of records) {
    if (record.data && typeof record.data === 'object' && !Array.isArray(record.data))
      Object.keys(record.data).forEach((key) => keys.add(key));
  }
  return [...keys].slice(0, 5);
}

const cell = (value: unknown) => (value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value));

function Records({ namespace, endpoint }: { namespace: string; endpoint: string }) {
  const [skip, setSkip] = useState(0);
  const [records, setRecords] = useState<DataRecord[]>();
  const [chosen, setChosen] = useState<DataRecord>();
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const path = `/api/v2.6/data/${encodeURIComponent(namespace)}/${endpoint.split('/').map(encodeURIComponent).join('/')}`;
  const load = (from = skip) =>
    call<DataRecord[]>(`${path}?skip=${from}&take=${PAGE}`).then(setRecords, (e: unknown) => setStatus({ error: errorText(e) }));
  useEffect(() => void load(), [skip, path]);

  const remove = async (record: DataRecord) => {
    if (!confirm('Delete this record?')) return;
    try {
      await call(`/api/v2.6/data?records=${encodeURIComponent(record.recordId)}`, { method: 'DELETE' });
      setChosen(undefined);
      await load();
      setStatus({ message: 'Record deleted' });
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };

  const columns = columnsOf(records ?? []);
  return (
    <section aria-labelledby="records-title">
      <p>
        <a href={href('data')}>← All data</a>
      </p>
      <ScreenTitle>
        {namespace} / {endpoint}
      </ScreenTitle>
      <Status
        {...status}
        message={status.message ?? (records ? `Records ${records.length ? skip + 1 : 0}–${skip + records.length}` : 'Loading…')}
      />
      <table class="records">
        <thead>
          <tr>
            <th scope="col">Record</th>
            {columns.map((column) => (
              <th scope="col">{column}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {(records ?? []).map((record) => (
            <tr key={record.recordId} class={chosen?.recordId === record.recordId ? 'chosen' : ''}>
              <td data-label="Record">
                <button type="button" class="link" onClick={() => setChosen(record)} aria-label={`Show record ${record.recordId}`}>
                  {record.recordId.slice(0, 8)}
                </button>
              </td>
              {columns.map((column) => (
                <td data-label={column}>{cell((record.data as Record<string, unknown>)?.[column])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <nav class="pager" aria-label="Pages of records">
        <button type="button" class="secondary" disabled={skip === 0} onClick={() => setSkip(Math.max(0, skip - PAGE))}>
          Previous page
        </button>
        <button type="button" class="secondary" disabled={(records?.length ?? 0) < PAGE} onClick={() => setSkip(skip + PAGE)}>
          Next page
        </button>
      </nav>
      {chosen ? (
        <section aria-labelledby="record-title" class="record">
          <h2 id="record-title">Record {chosen.recordId}</h2>
          <pre tabIndex={0} aria-label="Record as JSON">
            {JSON.stringify(chosen.data, null, 2)}
          </pre>
          <button type="button" class="danger" onClick={() => void remove(chosen)}>
            Delete record
          </button>
        </section>
      ) : null}
    </section>
  );
}

export function Data({ path }: { path: string[] }) {
  const [namespace, ...endpoint] = path;
  return namespace && endpoint.length ? <Records key={path.join('/')} namespace={namespace} endpoint={endpoint.join('/')} /> : <Tables />;
}
