// Data debits (what apps may take out of the instance), shown once the instance offers them
// (GET /api/v2.6/data-debit answers 200): list, details, cancel.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { ScreenTitle, Status } from '../ui';

interface DataDebit {
  dataDebitKey: string;
  dateCreated?: string;
  active?: boolean;
  enabled?: boolean;
  [key: string]: unknown;
}

/** Whether this instance has data debits at all (older instances answer 404). */
export async function dataDebitsOffered(): Promise<boolean> {
  try {
    await call('/api/v2.6/data-debit');
    return true;
  } catch {
    return false;
  }
}

export function DataDebits() {
  const [debits, setDebits] = useState<DataDebit[]>();
  const [chosen, setChosen] = useState<DataDebit>();
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const load = () => call<DataDebit[]>('/api/v2.6/data-debit').then(setDebits, (e: unknown) => setStatus({ error: errorText(e) }));
  useEffect(() => void load(), []);

  const cancel = async (debit: DataDebit) => {
    try {
      await call(`/api/v2.6/data-debit/${encodeURIComponent(debit.dataDebitKey)}/disable?atPeriodEnd=false`);
      setStatus({ message: `${debit.dataDebitKey} cancelled` });
      setChosen(undefined);
      await load();
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };

  return (
    <section aria-labelledby="debits-title">
      <ScreenTitle>Data debits</ScreenTitle>
      <Status {...status} />
      {debits && debits.length === 0 ? <p class="muted">No data debits.</p> : null}
      <ul class="endpoints">
        {(debits ?? []).map((debit) => (
          <li key={debit.dataDebitKey}>
            <button type="button" class="link" onClick={() => setChosen(debit)}>
              {debit.dataDebitKey}
            </button>{' '}
            <span class="muted">{(debit.active ?? debit.enabled) ? 'active' : 'inactive'}</span>
          </li>
        ))}
      </ul>
      {chosen ? (
        <section aria-labelledby="debit-title">
          <h2 id="debit-title">{chosen.dataDebitKey}</h2>
          <pre tabIndex={0}>{JSON.stringify(chosen, null, 2)}</pre>
          <button type="button" class="danger" onClick={() => void cancel(chosen)}>
            Cancel this data debit
          </button>
        </section>
      ) : null}
    </section>
  );
}
