// Data debits (what apps and people may take out of the instance under terms the owner accepted):
// the list, the terms of one, cancel. The tab shows only when there are some.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { countWords, formatDate, ScreenTitle, SidePanel, Status } from '../ui';

interface Terms {
  purpose?: string;
  start?: string;
  bundle?: { name?: string; bundle?: Record<string, { endpoints?: { endpoint: string }[] }> };
}

interface DataDebit {
  dataDebitKey: string;
  dateCreated?: string;
  active?: boolean;
  enabled?: boolean;
  requestClientName?: string;
  /** Every version of the terms, the newest last. */
  permissions?: Terms[];
  [key: string]: unknown;
}

/** What the newest terms say: why, since when, and which tables. */
function termsFacts(debit: DataDebit): [string, string][] {
  const terms = debit.permissions?.[debit.permissions.length - 1];
  const tables = Object.values(terms?.bundle?.bundle ?? {}).flatMap((query) => (query.endpoints ?? []).map((e) => e.endpoint));
  const facts: [string, string | undefined][] = [
    ['Purpose', terms?.purpose],
    ['Since', terms?.start ? formatDate(terms.start) : undefined],
    ['Takes from', tables.length ? [...new Set(tables)].join(', ') : undefined],
  ];
  return facts.filter((fact): fact is [string, string] => fact[1] !== undefined);
}

const DEBITS = '/api/v2.6/data-debit';

/** Whether the owner has any data debit (an instance without them answers 404 or an empty list). */
export async function hasDataDebits(): Promise<boolean> {
  try {
    return (await call<DataDebit[]>(DEBITS)).length > 0;
  } catch {
    return false;
  }
}

export function DataDebits() {
  const [debits, setDebits] = useState<DataDebit[]>();
  const [chosen, setChosen] = useState<DataDebit>();
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const load = () => call<DataDebit[]>(DEBITS).then(setDebits, (e: unknown) => setStatus({ error: errorText(e) }));
  useEffect(() => void load(), []);

  const cancel = async (debit: DataDebit) => {
    try {
      await call(`${DEBITS}/${encodeURIComponent(debit.dataDebitKey)}/disable?atPeriodEnd=false`);
      setStatus({ message: `${debit.requestClientName ?? debit.dataDebitKey} can no longer take data` });
      setChosen(undefined);
      await load();
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };

  return (
    <section aria-labelledby="debits-title">
      <div class="screen-head">
        <ScreenTitle id="debits-title">Data debits</ScreenTitle>
        {debits ? <p class="summary">{countWords(debits.length, 'data debit')}</p> : null}
      </div>
      <p class="muted">What apps may take out of your data store, on terms you accepted.</p>
      <Status {...status} message={status.message ?? (debits ? undefined : 'Loading…')} />
      {debits && debits.length === 0 ? <p class="empty">No app or person takes data out of your data store.</p> : null}
      <div class={chosen ? 'with-panel' : undefined}>
        <ul class="rows">
          {(debits ?? []).map((debit) => (
            <li key={debit.dataDebitKey} class={chosen?.dataDebitKey === debit.dataDebitKey ? 'selected' : undefined}>
              <button type="button" class="link" onClick={() => setChosen(debit)}>
                {debit.requestClientName ?? debit.dataDebitKey}
              </button>
              <span class={`badge ${(debit.active ?? debit.enabled) ? 'running' : ''}`}>
                {(debit.active ?? debit.enabled) ? 'Active' : 'Ended'}
              </span>
            </li>
          ))}
        </ul>
        {chosen ? (
          <SidePanel id="debit-title" title={chosen.requestClientName ?? chosen.dataDebitKey} onClose={() => setChosen(undefined)}>
            <dl class="facts">
              {termsFacts(chosen).map(([term, value]) => (
                <div key={term}>
                  <dt>{term}</dt>
                  <dd>{value}</dd>
                </div>
              ))}
            </dl>
            {(chosen.active ?? chosen.enabled) ? (
              <button type="button" class="danger" onClick={() => void cancel(chosen)}>
                Cancel this data debit
              </button>
            ) : null}
            <details>
              <summary>Everything, as JSON</summary>
              <pre tabIndex={0} aria-label="Data debit as JSON">
                {JSON.stringify(chosen, null, 2)}
              </pre>
            </details>
          </SidePanel>
        ) : null}
      </div>
    </section>
  );
}
