// Push an update: the record to certify as the app's next version (its JSON, checked by dex as
// update-application checks it), who receives it (a cluster's registered instances, the ones chosen, or
// those whose owner has the app set up), a preview that is a dry run (dex validates everything, says who
// would receive it, and stores and sends nothing), then the push itself for exactly what was previewed.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { countWords, Status, type StatusLine } from '../ui';
import { dex, failureText, type AppRecord, type Instance, type Selection } from './api';

type Mode = 'all' | 'chosen' | 'setUp';

/** Choices shown at once: a find narrows a long list. */
const SHOWN = 100;

export interface PushFormProps {
  /** The app being updated; none for a new app (its id is the record's). */
  appId?: string;
  /** The record the form starts from (the latest version's, or a new app's template). */
  record: AppRecord;
  /** The version the push will store. */
  nextVersion: number;
  /** After the push: what was stored and who it is on its way to (the page says so: this form starts afresh). */
  onPushed(appId: string, version: number, targets: string[]): void;
}

export function PushForm({ appId, record, nextVersion, onPushed }: PushFormProps) {
  const [text, setText] = useState(() => JSON.stringify(record, null, 2));
  const [clusters, setClusters] = useState<string[]>([]);
  const [instances, setInstances] = useState<Instance[]>([]);
  const [cluster, setCluster] = useState('');
  const [mode, setMode] = useState<Mode>('chosen');
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [find, setFind] = useState('');
  const [preview, setPreview] = useState<{ for: string; targets: string[] }>();
  const [status, setStatus] = useState<StatusLine>({});
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    Promise.all([dex<{ clusters: string[] }>('/api/admin/clusters'), dex<{ instances: Instance[] }>('/api/admin/instances')]).then(
      ([c, i]) => {
        setClusters(c.clusters);
        setCluster((current) => current || c.clusters[0] || '');
        setInstances(i.instances.filter((instance) => instance.state === 'registered'));
      },
      (e: unknown) => setStatus({ error: failureText(e) }),
    );
  }, []);

  const inCluster = useMemo(() => instances.filter((i) => i.cluster === cluster), [instances, cluster]);
  const shown = inCluster.filter((i) => i.address.includes(find.trim().toLowerCase())).slice(0, SHOWN);

  /** The request as the form stands, or what is wrong with it. */
  const request = (): { appId: string; body: Selection & { record: unknown } } | { problem: string } => {
    let parsed: AppRecord;
    try {
      parsed = JSON.parse(text) as AppRecord;
    } catch (e) {
      return { problem: `The record is not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
    }
    const id = appId ?? (typeof parsed.id === 'string' ? parsed.id : typeof parsed.namespace === 'string' ? parsed.namespace : '');
    if (!id) return { problem: 'The record needs an id (or a namespace, which is its id by default).' };
    if (!cluster) return { problem: 'Choose a cluster.' };
    if (mode === 'chosen' && chosen.size === 0) return { problem: 'Choose at least one instance.' };
    const selection: Selection =
      mode === 'chosen' ? { cluster, addresses: [...chosen].filter((a) => inCluster.some((i) => i.address === a)) } : { cluster };
    if (mode === 'setUp') selection.setUp = true;
    return { appId: id, body: { ...selection, record: parsed } };
  };
  const current = request();
  const currentKey = JSON.stringify(current);
  const previewed = preview?.for === currentKey ? preview : undefined;

  const send = async (dryRun: boolean) => {
    if ('problem' in current) return setStatus({ error: current.problem });
    setBusy(true);
    // The push names the previewed instances themselves: one registered since the preview is not added.
    const body = dryRun || !previewed ? current.body : { ...current.body, addresses: previewed.targets };
    try {
      const answer = await dex<{ targets: string[]; version?: number }>(`/api/admin/apps/${encodeURIComponent(current.appId)}/push`, {
        method: 'POST',
        body: { ...body, dryRun },
      });
      if (dryRun) {
        setPreview({ for: currentKey, targets: answer.targets });
        setStatus({});
      } else {
        setPreview(undefined);
        setStatus({});
        onPushed(current.appId, answer.version!, answer.targets);
      }
    } catch (e) {
      setPreview(undefined);
      setStatus({ error: failureText(e) });
    } finally {
      setBusy(false);
    }
  };

  const toggle = (address: string) =>
    setChosen((set) => {
      const next = new Set(set);
      if (next.has(address)) next.delete(address);
      else next.add(address);
      return next;
    });

  return (
    <form class="push-form" onSubmit={(e) => e.preventDefault()}>
      <label>
        The app record (JSON)
        <textarea class="record" rows={14} spellcheck={false} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <span class="muted small">Dex checks it as update-application does, and stores it as version {nextVersion}.</span>
      </label>
      {/* A label of its own: one wrapped around the list would take its options into its name. */}
      <div class="field">
        <label for="push-cluster">Cluster</label>
        <select id="push-cluster" value={cluster} onChange={(e) => setCluster(e.currentTarget.value)}>
          {clusters.map((domain) => (
            <option key={domain} value={domain}>
              {domain}
            </option>
          ))}
        </select>
      </div>
      <fieldset>
        <legend>Who receives it</legend>
        {(
          [
            ['chosen', 'Only the instances I choose'],
            ['all', 'Every registered instance of the cluster'],
            ['setUp', 'The instances whose owner has the app set up'],
          ] as const
        ).map(([value, words]) => (
          <label key={value} class="choice">
            <input type="radio" name="mode" value={value} checked={mode === value} onChange={() => setMode(value)} />
            {words}
          </label>
        ))}
      </fieldset>
      {mode === 'chosen' ? (
        <fieldset class="instances-choice">
          <legend>
            Instances of {cluster || 'the cluster'} ({chosen.size} chosen)
          </legend>
          <label>
            Find an instance
            <input type="search" value={find} onInput={(e) => setFind(e.currentTarget.value)} />
          </label>
          {inCluster.length === 0 ? <p class="muted">No registered instance in this cluster.</p> : null}
          <div class="choices">
            {shown.map((i) => (
              <label key={i.address} class="choice">
                <input type="checkbox" checked={chosen.has(i.address)} onChange={() => toggle(i.address)} />
                {i.address}
              </label>
            ))}
          </div>
        </fieldset>
      ) : null}
      <div class="actions">
        <button type="button" class="secondary" disabled={busy} onClick={() => void send(true)}>
          Preview (dry run)
        </button>
        <button type="button" disabled={busy || !previewed} onClick={() => void send(false)}>
          {previewed ? `Push to ${countWords(previewed.targets.length, 'instance')}` : 'Push'}
        </button>
      </div>
      {previewed ? (
        <section class="preview" aria-labelledby="preview-title">
          <h3 id="preview-title">
            Preview: {countWords(previewed.targets.length, 'instance')} would receive version {nextVersion}
          </h3>
          <p class="muted small">A dry run: the record passed dex's checks; nothing was stored or sent.</p>
          <ul class="plain">
            {previewed.targets.map((address) => (
              <li key={address}>{address}</li>
            ))}
          </ul>
        </section>
      ) : (
        <p class="muted small">Preview first: the push goes to exactly the instances the preview lists.</p>
      )}
      <Status {...status} />
    </form>
  );
}
