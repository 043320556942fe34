// One instance: its state, owner, usage against its quotas, accounts, apps, latest changes (their kind
// only), exports and imports, and its record of state changes; suspend or resume it, set its quotas, or
// close it, each with the reason the record keeps.
import { useEffect, useState } from 'preact/hooks';
import { href } from '../router';
import { formatBytes, formatDate, ScreenTitle, Status, type StatusLine } from '../ui';
import { admin, failureText, type InstanceDetails } from './api';
import { DEX_WORDS, ofQuota, parseSize, STATE_WORDS } from './words';

function UsageBar({ label, used, quota }: { label: string; used: number; quota: number }) {
  return (
    <div class="usage">
      <span>
        {label}: {ofQuota(used, quota)}
      </span>
      <meter min={0} max={quota} value={Math.min(used, quota)} high={quota * 0.9} aria-label={`${label} used`} />
    </div>
  );
}

export function InstancePage({ address }: { address: string }) {
  const [instance, setInstance] = useState<InstanceDetails>();
  const [status, setStatus] = useState<StatusLine>({});
  const [reason, setReason] = useState('');
  const [fileQuota, setFileQuota] = useState('');
  const [recordQuota, setRecordQuota] = useState('');
  const [closing, setClosing] = useState(false);
  const path = `/instances/${encodeURIComponent(address)}`;

  const show = (details: InstanceDetails) => {
    setInstance(details);
    setFileQuota(details.customQuota.bytes !== undefined ? formatBytes(details.customQuota.bytes) : '');
    setRecordQuota(details.customQuota.recordsBytes !== undefined ? formatBytes(details.customQuota.recordsBytes) : '');
  };
  useEffect(() => {
    admin<InstanceDetails>(path).then(show, (e: unknown) => setStatus({ error: failureText(e) }));
  }, [address]);

  const act = async (what: string, method: string, suffix: string, body: unknown, done: string) => {
    try {
      show(await admin<InstanceDetails>(`${path}${suffix}`, { method, body }));
      setStatus({ message: done });
      setReason('');
      setClosing(false);
    } catch (e) {
      setStatus({ error: `${what}: ${failureText(e)}` });
    }
  };
  const needReason = (then: () => Promise<void>) => () =>
    reason.trim() ? void then() : setStatus({ error: 'Say why first: the reason is kept with the change.' });
  const saveQuota = (e: Event) => {
    e.preventDefault();
    const bytes = fileQuota.trim() ? parseSize(fileQuota) : null;
    const recordsBytes = recordQuota.trim() ? parseSize(recordQuota) : null;
    if ((fileQuota.trim() && bytes === null) || (recordQuota.trim() && recordsBytes === null))
      return setStatus({ error: 'A quota is a size such as 5 GiB or 512 MiB (empty: the cluster default).' });
    void act('The quota was not set', 'PUT', '/quota', { bytes, recordsBytes }, 'Quotas saved.');
  };

  if (!instance)
    return (
      <section>
        <p>
          <a href={href('instances')}>← All instances</a>
        </p>
        <Status {...status} message={status.error ? undefined : 'Loading…'} />
      </section>
    );
  const { usage, quota } = instance;
  return (
    <section aria-labelledby="instance-title" class="instance-page">
      <p>
        <a href={href('instances')}>← All instances</a>
      </p>
      <div class="screen-head">
        <ScreenTitle id="instance-title">{instance.address}</ScreenTitle>
        <span class={`badge state-${instance.state}`}>{STATE_WORDS[instance.state]}</span>
      </div>
      <Status {...status} />
      <div class="panels">
        <section class="card" aria-labelledby="about-title">
          <h2 id="about-title">About</h2>
          <dl class="facts">
            <dt>Owner</dt>
            <dd>{instance.ownerEmail ?? '—'}</dd>
            <dt>State</dt>
            <dd>
              {STATE_WORDS[instance.state]}
              {instance.stateReason ? ` (${instance.stateReason})` : ''}
              {instance.closeAfter ? `, erased after ${formatDate(instance.closeAfter)}` : ''}
            </dd>
            <dt>Created</dt>
            <dd>{formatDate(instance.createdAt)}</dd>
            <dt>Last active</dt>
            <dd>{instance.lastActiveAt ? formatDate(instance.lastActiveAt) : 'Never'}</dd>
            <dt>At dex</dt>
            <dd>{DEX_WORDS[instance.dexState]}</dd>
            <dt>Accounts</dt>
            <dd>
              1 owner, {instance.accounts.user} other {instance.accounts.user === 1 ? 'user' : 'users'}, {instance.accounts.application}{' '}
              {instance.accounts.application === 1 ? 'app' : 'apps'}
            </dd>
          </dl>
        </section>
        <section class="card" aria-labelledby="usage-title">
          <h2 id="usage-title">Storage</h2>
          <UsageBar label={`Files (${usage.files.toLocaleString('en')})`} used={usage.fileBytes} quota={quota.bytes} />
          <UsageBar label={`Records (${usage.records.toLocaleString('en')})`} used={usage.recordBytes} quota={quota.recordsBytes} />
          <form class="inline" onSubmit={saveQuota}>
            <label>
              File quota
              <input
                value={fileQuota}
                placeholder={`Default: ${formatBytes(quota.bytes)}`}
                onInput={(e) => setFileQuota(e.currentTarget.value)}
              />
            </label>
            <label>
              Record quota
              <input
                value={recordQuota}
                placeholder={`Default: ${formatBytes(quota.recordsBytes)}`}
                onInput={(e) => setRecordQuota(e.currentTarget.value)}
              />
            </label>
            <button type="submit" class="secondary">
              Save quotas
            </button>
          </form>
        </section>
      </div>
      <section class="card" aria-labelledby="change-title">
        <h2 id="change-title">Suspend, resume or close</h2>
        <label>
          Reason (kept with the change; the owner never sees it)
          <input value={reason} maxLength={1000} onInput={(e) => setReason(e.currentTarget.value)} />
        </label>
        <div class="actions">
          {instance.state === 'active' ? (
            <button
              type="button"
              onClick={needReason(() =>
                act('Not suspended', 'POST', '/suspend', { reason }, 'Suspended: every call to it now answers 423.'),
              )}
            >
              Suspend
            </button>
          ) : null}
          {instance.state === 'suspended' ? (
            <button
              type="button"
              onClick={needReason(() => act('Not resumed', 'POST', '/resume', { reason }, 'Resumed: it answers again.'))}
            >
              Resume
            </button>
          ) : null}
          {instance.state !== 'closing' ? (
            closing ? (
              <>
                <button
                  type="button"
                  class="danger"
                  onClick={needReason(() =>
                    act('Not closed', 'POST', '/close', { reason }, 'Closing: it is erased after the grace period.'),
                  )}
                >
                  Close and erase after the grace period
                </button>
                <button type="button" class="secondary" onClick={() => setClosing(false)}>
                  Keep it
                </button>
              </>
            ) : (
              <button type="button" class="secondary" onClick={() => setClosing(true)}>
                Close…
              </button>
            )
          ) : null}
        </div>
      </section>
      <div class="panels">
        <section class="card" aria-labelledby="apps-title">
          <h2 id="apps-title">Apps</h2>
          {instance.apps.length === 0 ? <p class="muted">No app has been pushed to it.</p> : null}
          <ul class="plain">
            {instance.apps.map((app) => (
              <li key={app.appId}>
                {app.title ?? app.appId} <span class="muted">version {app.version}</span>{' '}
                {app.setup ? app.enabled ? 'set up' : 'set up, disabled' : <span class="muted">not set up</span>}
              </li>
            ))}
          </ul>
        </section>
        <section class="card" aria-labelledby="portability-title">
          <h2 id="portability-title">Exports and imports</h2>
          {instance.portability.length === 0 ? <p class="muted">None.</p> : null}
          <ul class="plain">
            {instance.portability.map((job) => (
              <li key={job.createdAt}>
                {job.kind === 'export' ? 'Export' : 'Import'} {job.status}, {formatDate(job.createdAt)}
              </li>
            ))}
          </ul>
        </section>
      </div>
      <div class="panels">
        <section class="card" aria-labelledby="events-title">
          <h2 id="events-title">Latest changes</h2>
          <p class="hint">What kind of change and by whom; never what it touched.</p>
          {instance.recentEvents.length === 0 ? <p class="muted">None yet.</p> : null}
          <ul class="plain">
            {instance.recentEvents.map((event, i) => (
              <li key={i}>
                {event.type}{' '}
                <span class="muted">
                  by the {event.actorKind}, {formatDate(event.at)}
                </span>
              </li>
            ))}
          </ul>
        </section>
        <section class="card" aria-labelledby="history-title">
          <h2 id="history-title">State changes</h2>
          {instance.history.length === 0 ? <p class="muted">None.</p> : null}
          <ul class="plain">
            {instance.history.map((change) => (
              <li key={change.at}>
                {STATE_WORDS[change.state]} by {change.actor}: {change.reason} <span class="muted">{formatDate(change.at)}</span>
              </li>
            ))}
          </ul>
        </section>
      </div>
    </section>
  );
}
