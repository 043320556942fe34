// One certified app: its latest record, an update pushed from here (PushForm), and its history of
// versions, newest first, each with who certified it, its record and its pushes instance by instance.
// A new app is certified from the same form, starting from a template record.
import { useEffect, useState } from 'preact/hooks';
import { href } from '../router';
import { countWords, formatDate, ScreenTitle, shortDate, Status } from '../ui';
import { dex, failureText, type AppRecord, type AppVersion } from './api';
import { Pushes } from './Pushes';
import { PushForm } from './PushForm';

export function AppPage({ appId }: { appId: string }) {
  const [versions, setVersions] = useState<AppVersion[]>();
  const [open, setOpen] = useState<number>();
  const [error, setError] = useState<string>();
  const [pushed, setPushed] = useState<string>();
  const load = () =>
    dex<{ versions: AppVersion[] }>(`/api/admin/apps/${encodeURIComponent(appId)}`).then(
      ({ versions }) => {
        setVersions(versions);
        setOpen((shown) => shown ?? versions[0]?.version);
      },
      (e: unknown) => setError(failureText(e)),
    );
  useEffect(() => void load(), [appId]);
  if (!versions) return <Status error={error} message={error ? undefined : 'Loading…'} />;
  const [latest] = versions;
  if (!latest) return <p class="empty">No version of {appId}.</p>;
  return (
    <section aria-labelledby="app-title">
      <p>
        <a href={href('apps')}>Apps</a>
      </p>
      <ScreenTitle id="app-title">{latest.record.title ?? appId}</ScreenTitle>
      <dl class="facts">
        <dt>Id</dt>
        <dd>{appId}</dd>
        <dt>Latest version</dt>
        <dd>{latest.version}</dd>
        <dt>Certified by</dt>
        <dd>
          {latest.createdBy}, {formatDate(latest.createdAt)}
        </dd>
        {latest.record.description ? (
          <>
            <dt>Description</dt>
            <dd>{latest.record.description}</dd>
          </>
        ) : null}
      </dl>
      <div class="panels">
        <section class="card" aria-labelledby="push-title">
          <h2 id="push-title">Push an update</h2>
          <Status message={pushed} />
          <PushForm
            key={latest.version}
            appId={appId}
            record={latest.record}
            nextVersion={latest.version + 1}
            onPushed={(_id, version, targets) => {
              setPushed(`Version ${version} is on its way to ${countWords(targets.length, 'instance')}. Its progress is under Versions.`);
              setOpen(version);
              void load();
            }}
          />
        </section>
        <section class="card" aria-labelledby="versions-title">
          <h2 id="versions-title">Versions</h2>
          <ol class="plain versions">
            {versions.map((v) => (
              <li key={v.version}>
                <div class="push-head">
                  <strong>Version {v.version}</strong>
                  <span class="muted small">
                    {v.createdBy}, {shortDate(v.createdAt)}
                  </span>
                  <button
                    type="button"
                    class="secondary small"
                    aria-expanded={open === v.version}
                    onClick={() => setOpen(open === v.version ? undefined : v.version)}
                  >
                    {open === v.version ? 'Hide who received it' : 'Who received it'}
                  </button>
                </div>
                <details>
                  <summary>Its record</summary>
                  <pre tabIndex={0} aria-label={`The record of version ${v.version}`}>
                    {JSON.stringify(v.record, null, 2)}
                  </pre>
                </details>
                {open === v.version ? <Pushes appId={appId} version={v.version} /> : null}
              </li>
            ))}
          </ol>
        </section>
      </div>
    </section>
  );
}

/** A new app's record as a starting point: every field dex requires, to be filled in. */
const TEMPLATE: AppRecord = {
  id: 'my-app',
  title: 'My app',
  namespace: 'my-app',
  description: 'What the app does, in a sentence',
  logoUrl: 'https://my-app.example/logo.png',
  url: 'https://my-app.example',
  authUrl: '/auth',
  browser: false,
  category: 'app',
  setup: true,
  loginAvailable: true,
};

export function NewApp() {
  return (
    <section aria-labelledby="new-app-title">
      <p>
        <a href={href('apps')}>Apps</a>
      </p>
      <ScreenTitle id="new-app-title">Certify a new app</ScreenTitle>
      <p class="muted">Its first version goes to the instances you choose; later versions are pushed from its page.</p>
      <section class="card">
        <PushForm record={TEMPLATE} nextVersion={1} onPushed={(appId) => (location.hash = href('apps', appId))} />
      </section>
    </section>
  );
}
