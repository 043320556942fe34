// One version's pushes, instance by instance: waiting, sending, delivered, or failed with the instance's
// reason (trying again by itself, or given up); a failed one is retried from here. Read again every
// second while any is still on its way.
import { useEffect, useState } from 'preact/hooks';
import { formatDate, Status, type StatusLine } from '../ui';
import { dex, failureText, type Push } from './api';
import { PUSH_BADGE, PUSH_WORDS, times } from './words';

const ON_ITS_WAY = new Set(['queued', 'sending', 'retrying']);

export function Pushes({ appId, version }: { appId: string; version: number }) {
  const [pushes, setPushes] = useState<Push[]>();
  const [status, setStatus] = useState<StatusLine>({});
  const [tick, setTick] = useState(0);
  const load = () =>
    dex<{ pushes: Push[] }>(`/api/admin/apps/${encodeURIComponent(appId)}/versions/${version}/pushes`).then(
      ({ pushes }) => setPushes(pushes),
      (e: unknown) => setStatus({ error: failureText(e) }),
    );
  useEffect(() => void load(), [appId, version, tick]);
  const moving = pushes?.some((p) => ON_ITS_WAY.has(p.state)) ?? false;
  useEffect(() => {
    if (!moving) return undefined;
    const timer = setTimeout(() => setTick((n) => n + 1), 1000);
    return () => clearTimeout(timer);
  }, [moving, pushes]);

  const retry = async (push: Push) => {
    try {
      await dex(`/api/admin/pushes/${push.id}/retry`, { method: 'POST' });
      setStatus({ message: `${push.address} is being sent version ${version} again.` });
      await load();
    } catch (e) {
      setStatus({ error: failureText(e) });
    }
  };

  if (!pushes) return <Status {...status} message={status.error ? undefined : 'Loading…'} />;
  const delivered = pushes.filter((p) => p.state === 'delivered').length;
  const failing = pushes.filter((p) => p.state === 'failed' || p.state === 'retrying').length;
  return (
    <div class="pushes">
      <p class="summary">
        {delivered} of {pushes.length} delivered{failing ? `, ${failing} failed` : ''}
        {moving ? ' (still on its way)' : ''}
      </p>
      <Status {...status} />
      <ul class="plain" aria-label={`Pushes of version ${version}`}>
        {pushes.map((push) => (
          <li key={push.id}>
            <div class="push-head">
              <strong>{push.address}</strong> <span class={PUSH_BADGE[push.state]}>{PUSH_WORDS[push.state]}</span>
              {push.state === 'failed' || push.state === 'retrying' ? (
                <button type="button" class="small" onClick={() => void retry(push)}>
                  Retry
                </button>
              ) : null}
            </div>
            {push.lastError && push.state !== 'delivered' ? <div class="error-text">Why: {push.lastError}</div> : null}
            <div class="muted small">
              {push.state === 'delivered' ? `Delivered ${formatDate(push.deliveredAt)}` : null}
              {push.state === 'delivered' && push.setUp !== undefined ? (push.setUp ? ', the owner has it set up' : ', not set up') : null}
              {push.attempts ? `${push.state === 'delivered' ? '; ' : ''}tried ${times(push.attempts)}` : null}
              {push.retries ? `, retried by an administrator ${times(push.retries)}` : null}
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}
