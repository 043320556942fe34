// Apps pushed through dex: logo (or its letter), description, status in the owner's words; set up,
// update, disable, enable, open.
import { useEffect, useState } from 'preact/hooks';
import { call, errorText } from '../api';
import { toConsoleApp, type AppStatus, type ConsoleApp } from '../apps';
import { countWords, ScreenTitle, shortDate, Status } from '../ui';

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

/**
 * The app's logo, or its first letter: when the logo's origin arrived after this page loaded (its CSP
 * does not allow it yet; a reload shows it), or when the logo fails to load.
 */
export function AppLogo({ app }: { app: ConsoleApp }) {
  const [failed, setFailed] = useState(false);
  return logoShown(app.logoUrl) && !failed ? (
    <img class="logo" src={app.logoUrl} alt="" width={48} height={48} onError={() => setFailed(true)} />
  ) : (
    <span class="logo letter" aria-hidden="true">
      {app.name.slice(0, 1).toUpperCase()}
    </span>
  );
}

/** The one thing to do next with an app, by its state; "setup" also updates and re-enables. */
const NEXT: Record<AppStatus, { action: 'setup' | 'disable'; label: string }> = {
  'not set up': { action: 'setup', label: 'Set up' },
  'needs update': { action: 'setup', label: 'Update' },
  disabled: { action: 'setup', label: 'Enable' },
  running: { action: 'disable', label: 'Disable' },
  failing: { action: 'disable', label: 'Disable' },
};

const DONE = { setup: 'is set up and running', disable: 'is disabled: it can no longer reach your data' };

export function Apps() {
  const [apps, setApps] = useState<ConsoleApp[]>();
  const [status, setStatus] = useState<{ message?: string; error?: string }>({});
  const load = () => loadApps().then(setApps, (e: unknown) => setStatus({ error: errorText(e) }));
  useEffect(() => void load(), []);

  const act = async (app: ConsoleApp, action: 'setup' | 'disable') => {
    try {
      await call(`/api/v2.6/applications/${encodeURIComponent(app.id)}/${action}`, { method: action === 'setup' ? 'POST' : 'GET' });
      setStatus({ message: `${app.name} ${DONE[action]}` });
      await load();
    } catch (e) {
      setStatus({ error: errorText(e) });
    }
  };

  return (
    <section aria-labelledby="apps-title">
      <div class="screen-head">
        <ScreenTitle id="apps-title">Apps</ScreenTitle>
        {apps ? <p class="summary">{countWords(apps.length, 'app')}</p> : null}
      </div>
      <Status {...status} message={status.message ?? (apps ? undefined : 'Loading…')} />
      {apps && apps.length === 0 ? (
        <p class="empty">
          No apps yet. When an app asks to use your data store, or your provider offers one, it shows here, and nothing reaches your data
          until you set it up.
        </p>
      ) : null}
      <ul class="cards">
        {(apps ?? []).map((app) => {
          const next = NEXT[app.status];
          return (
            <li key={app.id} class="card app-card">
              <div class="card-head">
                <AppLogo app={app} />
                <div>
                  <h2>{app.name}</h2>
                  <span class={`badge ${app.status.replace(/ /g, '-')}`}>{app.status[0]?.toUpperCase() + app.status.slice(1)}</span>
                </div>
              </div>
              {app.description ? <p class="card-text">{app.description}</p> : null}
              {app.status === 'not set up' ? null : <AppWebhooks appId={app.id} />}
              <div class="actions card-actions">
                <button type="button" class={next.action === 'setup' ? undefined : 'secondary'} onClick={() => void act(app, next.action)}>
                  {next.label} {app.name}
                </button>
                {app.url ? (
                  <a class="button secondary" href={app.url} target="_blank" rel="noopener noreferrer">
                    Open {app.name}
                  </a>
                ) : null}
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

interface Webhook {
  id: string;
  url: string;
  state: 'ok' | 'retrying' | 'failed';
  lastError: string | null;
  failingSince: string | null;
  delivered: number;
}

const HOOK_STATE = { ok: 'delivering', retrying: 'retrying', failed: 'failed: retries gave up after 24 h' };

/** The app's webhook subscriptions and how their deliveries go (none shown for an app not set up). */
function AppWebhooks({ appId }: { appId: string }) {
  const [hooks, setHooks] = useState<Webhook[]>([]);
  useEffect(
    () => void call<Webhook[]>(`/api/v2.6/applications/${encodeURIComponent(appId)}/webhooks`).then(setHooks, () => undefined),
    [appId],
  );
  if (hooks.length === 0) return null;
  return (
    <div class="webhooks">
      <h3>Webhooks</h3>
      <ul>
        {hooks.map((hook) => (
          <li key={hook.id}>
            <code>{hook.url}</code> <span class={`badge ${hook.state}`}>{HOOK_STATE[hook.state]}</span>
            {hook.lastError ? <span class="muted"> · {hook.lastError}</span> : null}
            {hook.failingSince ? <span class="muted"> · failing since {shortDate(hook.failingSince)}</span> : null}
          </li>
        ))}
      </ul>
    </div>
  );
}
