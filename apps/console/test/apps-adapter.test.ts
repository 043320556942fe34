// The console's one reader of app listings: both shapes of GET /api/v2.6/applications, and the
// origin check that decides whether an app token may leave the console.
import { onAppOrigin, toConsoleApp } from '../src/apps';

const record = {
  id: 'notes',
  title: 'Notes',
  namespace: 'notes',
  description: 'Keeps notes',
  logoUrl: 'https://cdn.notes.example/logo.png',
  url: 'https://notes.example/app',
  dataRead: ['calendar/events'],
};

/** HAT's HatApplication, as hat-js declares it (only the fields the console reads, plus some others). */
const hatApplication = {
  id: 'notes',
  kind: { kind: 'App', url: 'https://notes.example/app' },
  info: {
    version: '1.0.0',
    name: 'Notes',
    headline: 'Notes',
    description: { text: 'Keeps notes', markdown: 'Keeps notes', html: '<p>Keeps notes</p>' },
    graphics: { banner: { normal: '' }, logo: { normal: 'https://cdn.notes.example/logo.png' }, screenshots: [] },
  },
  permissions: {
    rolesGranted: [
      { role: 'namespacewrite', detail: 'notes' },
      { role: 'namespaceread', detail: 'notes' },
      { role: 'namespaceread', detail: 'calendar/events' },
    ],
  },
  setup: { kind: 'External', url: 'https://notes.example/auth', validRedirectUris: ['https://notes.example', 'https://m.notes.example'] },
};

describe('toConsoleApp', () => {
  it('reads the dex record shape', () => {
    expect(toConsoleApp({ application: record, setup: false, enabled: false, active: false })).toEqual({
      id: 'notes',
      name: 'Notes',
      description: 'Keeps notes',
      logoUrl: 'https://cdn.notes.example/logo.png',
      url: 'https://notes.example/app',
      origins: ['https://notes.example'],
      reads: ['notes', 'calendar/events'],
      writes: ['notes'],
      status: 'not set up',
    });
  });

  it('reads the HatApplication shape, with its registered redirect origins', () => {
    expect(toConsoleApp({ application: hatApplication, setup: true, enabled: true, active: true, needsUpdating: false })).toEqual({
      id: 'notes',
      name: 'Notes',
      description: 'Keeps notes',
      logoUrl: 'https://cdn.notes.example/logo.png',
      url: 'https://notes.example/app',
      origins: ['https://notes.example', 'https://m.notes.example'],
      reads: ['notes', 'calendar/events'],
      writes: ['notes'],
      status: 'running',
    });
  });

  it.each([
    [{ setup: false, enabled: true, active: true }, 'not set up'],
    [{ setup: true, enabled: false, active: false }, 'disabled'],
    [{ setup: true, enabled: true, active: false }, 'failing'],
    [{ setup: true, enabled: true, active: true, needsUpdating: true }, 'needs update'],
    [{ setup: true, enabled: true, active: true, needsUpdating: false }, 'running'],
  ])('gives %j the status %s', (state, status) => {
    expect(toConsoleApp({ application: record, ...state }).status).toBe(status);
  });
});

describe('onAppOrigin', () => {
  const app = toConsoleApp({ application: record, setup: true, enabled: true, active: true });

  it.each(['https://notes.example/callback', 'https://notes.example:443/cb?x=1', 'HTTPS://NOTES.EXAMPLE/cb'])(
    'lets a token go to %s',
    (target) => {
      expect(onAppOrigin(app, target)).toBe(true);
    },
  );

  it.each([
    ['another host', 'https://evil.example/callback'],
    ['a sub-domain', 'https://evil.notes.example/callback'],
    ['a look-alike suffix', 'https://notes.example.evil.example/'],
    ['user info naming the app', 'https://notes.example@evil.example/'],
    ['another scheme', 'http://notes.example/callback'],
    ['another port', 'https://notes.example:8443/callback'],
    ['javascript:', 'javascript:alert(1)'],
    ['a data: address', 'data:text/html,<script>1</script>'],
    ['a relative address', '/callback'],
    ['a scheme-relative address', '//evil.example/'],
    ['nothing', ''],
  ])('refuses %s', (_what, target) => {
    expect(onAppOrigin(app, target)).toBe(false);
  });

  it('refuses everything for an app without a usable address', () => {
    const bare = toConsoleApp({ application: { ...record, url: 'javascript:alert(1)' }, setup: true, enabled: true, active: true });
    expect(bare.origins).toEqual([]);
    expect(onAppOrigin(bare, 'https://notes.example/')).toBe(false);
  });
});
