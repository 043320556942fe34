// The instance console: log in (or recover a forgotten password), then files, apps, data, data debits, users, the
// public profile (and, from it, closing the instance), your data and the account's security; #/hatlogin for apps.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { BrandMark } from './icons';
import { href, useRoute } from './router';
import { adoptHandedToken, currentSession, endSession, onSessionChange } from './session';
import './style.css';
import { Activity } from './views/Activity';
import { Apps } from './views/Apps';
import { CloseInstance, Closing, closeState, type CloseState } from './views/CloseInstance';
import { Data } from './views/Data';
import { DataDebits, hasDataDebits } from './views/DataDebits';
import { FileDetails } from './views/FileDetails';
import { Files } from './views/Files';
import { HatLogin } from './views/HatLogin';
import { Login } from './views/Login';
import { Portability } from './views/Portability';
import { Profile } from './views/Profile';
import { Trash } from './views/Trash';
import { Forgot, PASSWORD_SET, PASSWORD_SET_NOTICE, Reset } from './views/Recovery';
import { Security } from './views/Security';
import { Users } from './views/Users';

function useSession() {
  const [session, setSession] = useState(currentSession);
  useEffect(() => onSessionChange(() => setSession(currentSession())), []);
  // The session ends when the token does, even with the tab left open.
  useEffect(() => {
    if (!session) return;
    const timer = setTimeout(() => setSession(currentSession()), Math.max(0, session.expires * 1000 - Date.now()));
    return () => clearTimeout(timer);
  }, [session?.expires]);
  return session;
}

function App() {
  const session = useSession();
  const route = useRoute();
  const [screen = 'files', ...rest] = route.path;
  const owner = session?.scope === 'owner';
  const [debits, setDebits] = useState(false);
  // A closing instance answers its owner only on the closing screen (everything else is 410), so an
  // owner's screens wait for its state (undefined: not known yet).
  const [closing, setClosing] = useState<CloseState | null | undefined>(undefined);
  useEffect(() => {
    setClosing(owner ? undefined : null);
    if (!owner) return;
    void closeState().then((state) => {
      const now = state?.state === 'closing' ? state : null;
      setClosing(now);
      if (!now) void hasDataDebits().then(setDebits);
    });
  }, [owner]);
  // The phone's menu closes once a screen is chosen.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [route]);

  if (screen === 'hatlogin') {
    return (
      <main id="main" class="narrow">
        <HatLogin query={route.query} session={session} />
      </main>
    );
  }
  // The forgotten-password pages work with or without a session (a reset link may open in any tab).
  if (screen === 'forgot' || (screen === 'reset' && rest[0])) {
    return (
      <main id="main" class="narrow">
        {screen === 'forgot' ? <Forgot /> : <Reset token={rest[0] as string} />}
      </main>
    );
  }
  if (!session) {
    return (
      <main id="main" class="narrow">
        <Login notice={route.query.has(PASSWORD_SET) ? PASSWORD_SET_NOTICE : undefined} />
      </main>
    );
  }

  if (closing === undefined) return <main id="main" class="narrow" />;
  if (closing) {
    const cancelled = () => {
      setClosing(null);
      location.hash = href('files');
    };
    return (
      <main id="main" class="narrow">
        <Closing state={closing} onCancelled={cancelled} />
      </main>
    );
  }

  const screens: [string, string, boolean][] = [
    ['files', 'Files', true],
    ['trash', 'Trash', owner],
    ['apps', 'Apps', owner],
    ['data', 'Data', owner],
    ['data-debits', 'Data debits', owner && debits],
    ['users', 'Users', owner],
    ['activity', 'Activity', owner],
    ['profile', 'Profile', owner],
    ['your-data', 'Your data', owner],
    ['security', 'Security', session.scope !== 'application'],
  ];
  const content =
    screen === 'files' && rest[0] ? (
      <FileDetails key={rest[0]} fileId={rest[0]} session={session} />
    ) : screen === 'files' ? (
      <Files session={session} query={route.query} />
    ) : screen === 'trash' && owner ? (
      <Trash />
    ) : screen === 'apps' && owner ? (
      <Apps />
    ) : screen === 'data' && owner ? (
      <Data path={rest} />
    ) : screen === 'data-debits' && owner ? (
      <DataDebits />
    ) : screen === 'users' && owner ? (
      <Users />
    ) : screen === 'activity' && owner ? (
      <Activity />
    ) : screen === 'profile' && owner ? (
      <Profile />
    ) : screen === 'close' && owner ? (
      <CloseInstance onClosed={setClosing} />
    ) : screen === 'your-data' && owner ? (
      <Portability />
    ) : screen === 'security' ? (
      <Security />
    ) : (
      <p>
        Nothing here. <a href={href('files')}>Go to your files</a>.
      </p>
    );

  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="bar">
        <a class="brand" href={href('files')}>
          <BrandMark />
          <span>{location.hostname}</span>
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
          <nav aria-label="Console">
            <ul>
              {screens
                .filter(([, , shown]) => shown)
                .map(([id, label]) => (
                  <li key={id}>
                    <a href={href(id)} aria-current={screen === id ? 'page' : undefined}>
                      {label}
                    </a>
                  </li>
                ))}
            </ul>
          </nav>
          <button type="button" class="secondary" onClick={endSession}>
            Log out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {content}
      </main>
    </>
  );
}

adoptHandedToken();
render(<App />, document.getElementById('root') as HTMLElement);
