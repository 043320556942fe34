// Apps pushed through dex: logo, description, status; set up, disable, open.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { toConsoleApp, type ConsoleApp } from '../apps';
import { ScreenTitle, Status } from '../ui';

export async function loadApps(): Promise<ConsoleApp[]> {
  return (await call<Parameters<typeof toConsoleApp>[0][]>('/api/v2.6/applications')).map(toConsoleApp);
}

/** Logo origins this page's CSP allows (the gateway lists them when it serves the page). */
const allowedLogoOrigins = new Set(
  (document.querySelector<HTMLMetaElement>('meta[name="pds-logo-origins"]')?.content ?? '').split(' ').filter(Boolean),
);

function logoShown(url: string | undefined): url is string {
  if (!url) return false;
  try {
    const { origin } = new URL(url, location.href);
    return origin === location.origin || allowedLogoOrigins.has(origin);
  } catch {
    return false;
  }
}

/** The app's logo; its first letter when the logo's origin arrived after this page loaded (reload shows it). */
export function AppLogo({ app }: { app: ConsoleApp }) {
  return logoShown(app.logoUrl) ? (
    <img class="logo" src={app.logoUrl} alt="" width={48} height={48} />
  ) : (
    <span class="logo" aria-hidden="true">
      {app.name.slice(0, 1)}
    </span>
  );
}

export function Apps() {
  const [apps, setApps] = useState<ConsoleApp[]>();
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const load = () => loadApps().then(setApps, (e: unknown) => setStatus({ error: errorText(e) }));
  useEffect(() => void load(), []);

  const act = async (app: ConsoleApp, action: 'setup' | 'disable') => {
    try {
      await call(`/api/v2.6/applications/${encodeURIComponent(app.id)}/${action}`, { method: action === 'setup' ? 'POST' : 'GET' });
      setStatus({ message: `${app.name}: ${action === 'setup' ? 'set up' : 'disabled'}` });
      await load();
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };

  return (
    <section aria-labelledby="apps-title">
      <ScreenTitle>Apps</ScreenTitle>
      <Status {...status} message={status.message ?? (apps ? undefined : 'Loading…')} />
      {apps && apps.length === 0 ? (
        <p class="muted">No apps yet: apps appear here once the exchange pushes them to this instance.</p>
      ) : null}
      <ul class="cards">
        {(apps ?? []).map((app) => (
          <li key={app.id} class="card">
            <AppLogo app={app} />
            <div>
              <h2>{app.name}</h2>
              <p>{app.description}</p>
              <p>
                Status: <strong class={`badge ${app.status.replace(' ', '-')}`}>{app.status}</strong>
              </p>
              <div class="actions">
                {app.status === 'not set up' || app.status === 'needs update' ? (
                  <button type="button" onClick={() => void act(app, 'setup')}>
                    Set up {app.name}
                  </button>
                ) : (
                  <button type="button" class="secondary" onClick={() => void act(app, 'disable')}>
                    Disable {app.name}
                  </button>
                )}
                {app.url ? (
                  <a class="button secondary" href={app.url} target="_blank" rel="noopener noreferrer">
                    Open {app.name}
                  </a>
                ) : null}
              </div>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
