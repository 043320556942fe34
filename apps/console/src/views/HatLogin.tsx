// #/hatlogin?name=<app>&redirect=<url>&fallback=<url>: the page hat-js's generateHatLoginUrl and
// getSetupUrl send people to. The owner sees what the app will read and write; on approval the app
// is set up and the browser goes to `redirect` with ?token=<the app's token>. The token only ever
// goes to the app's own registered origin (its url from dex): any other redirect is refused here.
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, call, errorText } from '../api';
import { onAppOrigin, toConsoleApp, type ConsoleApp } from '../apps';
import type { Session } from '../session';
import { href } from '../router';
import { ScreenTitle, Status } from '../ui';
import { AppLogo } from './Apps';
import { Login } from './Login';

export function withToken(redirect: string, token: string): string {
  const url = new URL(redirect);
  url.searchParams.set('token', token);
  return url.toString();
}

export function HatLogin({ query, session }: { query: URLSearchParams; session?: Session }) {
  const name = query.get('name') ?? '';
  const redirect = query.get('redirect') ?? '';
  const fallback = query.get('fallback') ?? '';
  const [app, setApp] = useState<ConsoleApp>();
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const [busy, setBusy] = useState(false);
  const [unknown, setUnknown] = useState(false);

  useEffect(() => {
    if (!session || session.scope !== 'owner' || !name) return;
    call<Parameters<typeof toConsoleApp>[0]>(`/api/v2.6/applications/${encodeURIComponent(name)}`).then(
      (listing) => setApp(toConsoleApp(listing)),
      (e: unknown) => (e instanceof ApiFailure && e.status === 404 ? setUnknown(true) : setStatus({ error: errorText(e) })),
    );
  }, [name, session?.userId]);

  if (!name) return <Status error="This login link names no app." />;
  if (!session)
    return (
      <Login
        heading={`Log in to continue to ${name}`}
        intro="An app asks to use your personal data store. Log in to see what it asks for."
      />
    );
  if (session.scope !== 'owner') return <Status error="Only the owner of this data store can approve apps." />;
  if (unknown)
    return (
      <section class="hatlogin" aria-labelledby="hatlogin-title">
        <ScreenTitle id="hatlogin-title">No app called “{name}” here</ScreenTitle>
        <p>
          The link you followed asks this data store to connect an app it does not know. Apps appear here once your provider offers them;
          nothing was shared.
        </p>
        <div class="actions">
          <button type="button" class="secondary" onClick={() => history.back()}>
            Go back
          </button>
          <a class="button" href={href('apps')}>
            See your apps
          </a>
        </div>
      </section>
    );
  if (!app) return <Status {...status} message={status.message ?? 'Loading…'} />;

  const trusted = onAppOrigin(app, redirect);
  const approve = async () => {
    setBusy(true);
    try {
      if (app.status !== 'running') await call(`/api/v2.6/applications/${encodeURIComponent(app.id)}/setup`, { method: 'POST' });
      const { accessToken } = await call<{ accessToken: string }>(`/api/v2.6/applications/${encodeURIComponent(app.id)}/access-token`);
      setStatus({ message: `Approved: returning to ${app.name}…` });
      location.assign(withToken(redirect, accessToken));
    } catch (e) {
      setStatus({ error: errorText(e) });
      setBusy(false);
    }
  };
  const refuse = () => {
    // The fallback carries no token, but it is still only followed to the app's own origin.
    if (onAppOrigin(app, fallback)) location.assign(fallback);
    else location.hash = '#/files';
  };

  return (
    <section class="hatlogin" aria-labelledby="hatlogin-title">
      <div class="app-head">
        <AppLogo app={app} />
        <h1 id="hatlogin-title">{app.name} asks to use your data</h1>
      </div>
      <p>{app.description}</p>
      <h2>It will be able to</h2>
      <ul>
        {app.reads.map((path) => (
          <li key={`r-${path}`}>read {path}</li>
        ))}
        {app.writes.map((path) => (
          <li key={`w-${path}`}>write {path}</li>
        ))}
      </ul>
      {trusted ? (
        <p class="muted">After approval you return to {new URL(redirect).origin}.</p>
      ) : (
        <p class="error" role="alert">
          This link would send {app.name}'s token to {redirect || 'no address'}, which is not {app.name}'s registered address
          {app.origins.length ? ` (${app.origins.join(', ')})` : ''}. Approval is blocked.
        </p>
      )}
      <div class="actions">
        <button type="button" disabled={!trusted || busy} onClick={() => void approve()}>
          Approve {app.name}
        </button>
        <button type="button" class="secondary" onClick={refuse}>
          Refuse
        </button>
      </div>
      <Status {...status} />
    </section>
  );
}
