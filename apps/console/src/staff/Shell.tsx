// A staff console's frame: who is logged in (asked of the session once; a call that finds it over shows
// the log-in again), the bar with its screens, the person's name and Log out, and the screen itself.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { BrandMark } from '../icons';
import { href, useRoute, type Route } from '../router';
import type { StaffApi } from './api';
import { StaffLogIn, type LogInWords } from './LogIn';

export interface ShellProps {
  api: StaffApi;
  title: string;
  logIn: LogInWords;
  /** [id, label] of each screen; the first is where the console opens. */
  screens: [string, string][];
  /** How the bar names the person (the actor without its prefix). */
  actorName(actor: string): string;
  /** The screen for the route: `screen` is its first segment, `rest` the others. */
  children(route: Route & { screen: string; rest: string[] }): ComponentChildren;
}

export function StaffShell({ api, title, logIn, screens, actorName, children }: ShellProps) {
  const route = useRoute();
  const [actor, setActor] = useState<string | null | undefined>(undefined);
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    api.call<{ actor?: string }>(api.sessionPath).then(
      ({ actor }) => setActor(actor ?? null),
      () => setActor(null),
    );
    return api.onLoggedOut(() => setActor(null));
  }, []);
  useEffect(() => setMenuOpen(false), [route]);

  if (actor === undefined) return <main id="main" class="narrow" />;
  if (actor === null)
    return (
      <main id="main" class="narrow">
        <StaffLogIn api={api} words={logIn} onIn={setActor} />
      </main>
    );

  const home = screens[0]![0];
  const [screen = home, ...rest] = route.path;
  const logOut = async () => {
    await api.call(api.sessionPath, { method: 'DELETE' }).catch(() => undefined);
    setActor(null);
  };
  return (
    <>
      <header class="bar">
        <a class="brand" href={href(home)}>
          <BrandMark />
          <span>{title}</span>
        </a>
        <button
          type="button"
          class="menu-button secondary"
          aria-expanded={menuOpen}
          aria-controls="menu"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <div id="menu" class={menuOpen ? 'menu open' : 'menu'}>
          <nav aria-label={title}>
            <ul>
              {screens.map(([id, label]) => (
                <li key={id}>
                  <a href={href(id)} aria-current={screen === id ? 'page' : undefined}>
                    {label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <span class="muted actor">{actorName(actor)}</span>
          <button type="button" class="secondary" onClick={() => void logOut()}>
            Log out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children({ ...route, screen, rest })}
      </main>
    </>
  );
}
