// The certified apps, each with its latest version and who certified it; each opens its own page.
import { useEffect, useState } from 'preact/hooks';
import { href } from '../router';
import { ScreenTitle, shortDate, Status } from '../ui';
import { dex, failureText, type App } from './api';

export function Apps() {
  const [apps, setApps] = useState<App[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    dex<{ apps: App[] }>('/api/admin/apps').then(
      ({ apps }) => setApps(apps),
      (e: unknown) => setError(failureText(e)),
    );
  }, []);
  return (
    <section aria-labelledby="apps-title">
      <div class="screen-head">
        <ScreenTitle id="apps-title">Apps</ScreenTitle>
        <a class="button" href={href('apps', 'new')}>
          Certify a new app
        </a>
      </div>
      <p class="muted">The apps dex has certified. Open one to see its versions and push an update.</p>
      <Status error={error} message={apps ? undefined : 'Loading…'} />
      {apps && apps.length === 0 ? <p class="empty">No app certified yet.</p> : null}
      {apps && apps.length > 0 ? (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="The apps">
          <table>
            <thead>
              <tr>
                <th scope="col">App</th>
                <th scope="col">Latest version</th>
                <th scope="col">Certified by</th>
                <th scope="col">When</th>
              </tr>
            </thead>
            <tbody>
              {apps.map((app) => (
                <tr key={app.appId}>
                  <td>
                    <a href={href('apps', app.appId)}>{app.record.title ?? app.appId}</a>
                    <div class="muted small">{app.appId}</div>
                  </td>
                  <td>{app.version}</td>
                  <td class="wrap">{app.createdBy}</td>
                  <td>{shortDate(app.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
