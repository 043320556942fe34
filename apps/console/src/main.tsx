// The instance console: log in (or recover a forgotten password), then a sidebar of the person's files
// (Files, Photos, Shared, Trash) and the owner's data store (Apps, Data, Users, Activity), with the
// account's own pages (Profile, Security, Your data) under its menu in the top bar; #/hatlogin for apps.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { BrandMark } from './icons';
import { href, useRoute } from './router';
import { adoptHandedToken, currentSession, onSessionChange, sessionName, takeEndReason, type Session } from './session';
import { AccountMenu } from './shell/AccountMenu';
import { Sidebar } from './shell/Sidebar';
import './style.css';
import { ToastHost } from './toast';
import { Activity } from './views/Activity';
import { Apps } from './views/Apps';
import { CloseInstance, Closing, closeState, type CloseState } from './views/CloseInstance';
import { Data } from './views/Data';
import { DataDebits, hasDataDebits } from './views/DataDebits';
import { FileDetails } from './views/FileDetails';
import { Files } from './views/Files';
import { HatLogin } from './views/HatLogin';
import { Login, SESSION_ENDED_NOTICE } from './views/Login';
import { Photos } from './views/Photos';
import { Portability } from './views/Portability';
import { Profile } from './views/Profile';
import { Forgot, PASSWORD_SET, PASSWORD_SET_NOTICE, Reset } from './views/Recovery';
import { Security } from './views/Security';
import { Trash } from './views/Trash';
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

/** The screen the address names, for this session; undefined when there is none by that name. */
function screenOf(session: Session, [screen = 'files', ...rest]: string[], query: URLSearchParams, onClosed: (state: CloseState) => void) {
  const owner = session.scope === 'owner';
  if (screen === 'files' && rest[0]) return <FileDetails key={rest[0]} fileId={rest[0]} session={session} />;
  if (screen === 'files') return <Files key="files" session={session} query={query} />;
  if (screen === 'photos') return <Photos open={rest[0]} />;
  if (screen === 'security') return <Security />;
  if (!owner) return undefined;
  const owners: Record<string, () => preact.JSX.Element> = {
    shared: () => <Files key="shared" session={session} query={query} shared />,
    trash: () => <Trash />,
    apps: () => <Apps />,
    data: () => <Data path={rest} />,
    'data-debits': () => <DataDebits />,
    users: () => <Users />,
    activity: () => <Activity />,
    profile: () => <Profile />,
    close: () => <CloseInstance onClosed={onClosed} />,
    'your-data': () => <Portability />,
  };
  return owners[screen]?.();
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
  // Why the last session ended, when the server ended it: read once, shown on the login page.
  const [ended, setEnded] = useState<string>();
  useEffect(() => {
    if (!session && takeEndReason()) setEnded(SESSION_ENDED_NOTICE);
    if (session) setEnded(undefined);
  }, [session]);
  // The phone's drawer closes once a screen is chosen.
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
        <Login notice={route.query.has(PASSWORD_SET) ? PASSWORD_SET_NOTICE : ended} />
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

  const content = screenOf(session, route.path, route.query, setClosing) ?? (
    <p>
      Nothing here. <a href={href('files')}>Go to your files</a>.
    </p>
  );
  // The instance's name is its owner's username.
  const name = owner ? (location.hostname.split('.')[0] ?? '') : (sessionName() ?? 'Account');

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
        <button
          type="button"
          class="menu-button secondary"
          aria-expanded={menuOpen}
          aria-controls="sidebar"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <a class="brand" href={href('files')}>
          <BrandMark />
          <span>{location.hostname}</span>
        </a>
        <AccountMenu owner={owner} name={name} />
      </header>
      <div class="layout">
        <Sidebar screen={screen} owner={owner} debits={debits} open={menuOpen} />
        <main id="main" tabIndex={-1}>
          {content}
        </main>
      </div>
      <ToastHost />
    </>
  );
}

adoptHandedToken();
render(<App />, document.getElementById('root') as HTMLElement);
