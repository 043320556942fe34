import request from 'supertest';
import { callerRequests, addUser, type SignedUp } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, push, pushToken } from './apps-fixtures';

const { gw, dex, owners } = useGateway({ dex: true, owners: ['alice', 'bob'] });
const { alice, bob } = owners;

beforeAll(async () => {
  const apps: [string, { dataRead?: string[] }][] = [
    ['notes', { dataRead: ['calendar', 'fitness/steps'] }],
    ['diary', {}],
  ];
  for (const [namespace, change] of apps) {
    await push(gw.app, alice.address, pushToken(gw, dex, alice.address), namespace, {
      version: 1,
      record: appRecord(namespace, change),
    }).expect(200);
  }
});

const as = (who: { token: string }, host = alice.address) => callerRequests(gw.app, who, host);

async function instanceId(owner: SignedUp): Promise<string> {
  return (await gw.db.instance.findUniqueOrThrow({ where: { address: owner.address } })).id;
}

describe('applications before setup', () => {
  it('lists the pushed apps of this instance only, not set up', async () => {
    const res = await as(alice).get('/api/v2.6/applications');
    expect(res.status).toBe(200);
    expect(res.body.map((a: { application: { id: string } }) => a.application.id)).toEqual(['diary', 'notes']);
    expect(res.body[1]).toEqual({
      application: expect.objectContaining({
        id: 'notes',
        kind: { kind: 'App', url: 'https://notes.example/' },
        info: expect.objectContaining({ version: '1.0.0', name: 'The notes app' }),
        setup: expect.objectContaining({ kind: 'External', url: 'https://notes.example/', validRedirectUris: ['https://notes.example'] }),
      }),
      setup: false,
      enabled: false,
      active: false,
    });
    expect((await as(bob, bob.address).get('/api/v2.6/applications')).body).toEqual([]);
  });

  it('answers 404 {error, message} for an unknown app, on every route', async () => {
    for (const path of ['', '/setup', '/disable', '/access-token']) {
      const res = await as(alice).get(`/api/v2.6/applications/nope${path}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Not Found', message: 'Application nope is not known to this instance' });
    }
    // Another instance's app is unknown here.
    expect((await as(bob, bob.address).get('/api/v2.6/applications/notes/setup')).status).toBe(404);
  });

  it('refuses an app token before setup (409) and answers 401 / 403 to anonymous callers and plain users', async () => {
    const token = await as(alice).get('/api/v2.6/applications/notes/access-token');
    expect(token.status).toBe(409);
    expect(token.body.error).toBe('Conflict');
    expect((await request(gw.app).get('/api/v2.6/applications').set('Host', alice.address)).status).toBe(401);
    const carol = await addUser(gw.app, alice, 'carol');
    for (const path of ['', '/notes', '/notes/setup', '/notes/access-token']) {
      expect((await as(carol).get(`/api/v2.6/applications${path}`)).status).toBe(403);
    }
    expect(await gw.db.application.findFirst({ where: { appId: 'notes', setup: true } })).toBeNull();
  });
});

describe('setup, token, disable', () => {
  let appToken: string;

  it('sets the app up: its account and its permission sets', async () => {
    const res = await as(alice).post('/api/v2.6/applications/notes/setup');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ setup: true, enabled: true, active: true, needsUpdating: false }));

    const id = await instanceId(alice);
    const app = await gw.db.application.findUniqueOrThrow({ where: { instanceId_appId: { instanceId: id, appId: 'notes' } } });
    const user = await gw.db.user.findFirstOrThrow({ where: { id: app.userId as string } });
    expect(user).toEqual(expect.objectContaining({ instanceId: id, kind: 'application', username: 'app:notes', passwordHash: null }));
    const grants = await gw.db.dataGrant.findMany({ where: { instanceId: id, userId: user.id } });
    expect(grants.map((g) => `${g.access} ${g.namespace}/${g.endpoint}`).sort()).toEqual([
      'read calendar/*',
      'read fitness/steps',
      'read notes/*',
      'write notes/*',
    ]);
  });

  it('issues an app token to the owner: it carries the application claim and works', async () => {
    const res = await as(alice).get('/api/v2.6/applications/notes/access-token');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accessToken: expect.any(String), userId: expect.any(String) });
    appToken = res.body.accessToken;
    const claims = JSON.parse(Buffer.from(appToken.split('.')[1] as string, 'base64url').toString());
    expect(claims).toEqual(
      expect.objectContaining({ application: 'notes', accessScope: 'application', sub: res.body.userId, iss: alice.address }),
    );
    expect((await as({ token: appToken }).get('/users/access_token/validate')).status).toBe(200);
    // An app may read its own status, not the list nor other apps, and may not mint tokens.
    expect((await as({ token: appToken }).get('/api/v2.6/applications/notes')).status).toBe(200);
    expect((await as({ token: appToken }).get('/api/v2.6/applications/diary')).status).toBe(403);
    expect((await as({ token: appToken }).get('/api/v2.6/applications')).status).toBe(403);
    expect((await as({ token: appToken }).get('/api/v2.6/applications/notes/access-token')).status).toBe(403);
    // The token belongs to alice's instance only.
    expect((await as({ token: appToken }, bob.address).get('/users/access_token/validate')).status).toBe(401);
  });

  it('disabling stops the app token at once; a new token is refused until setup again', async () => {
    const res = await as(alice).get('/api/v2.6/applications/notes/disable');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ setup: true, enabled: false, active: false }));
    const refused = await as({ token: appToken }).get('/api/v2.6/applications/notes');
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ error: 'Not Authenticated', message: 'Not Authenticated' });
    expect((await as(alice).get('/api/v2.6/applications/notes/access-token')).status).toBe(409);

    expect((await as(alice).get('/api/v2.6/applications/notes/setup')).status).toBe(200);
    // Setting up again re-enables the same account, so the earlier token works again.
    expect((await as({ token: appToken }).get('/api/v2.6/applications/notes')).status).toBe(200);
  });

  it('a newer pushed version shows needsUpdating until the owner sets it up again, which adopts its grants', async () => {
    await push(gw.app, alice.address, pushToken(gw, dex, alice.address), 'notes', {
      version: 2,
      record: appRecord('notes', { dataRead: ['diary'] }),
    }).expect(200);
    const updated = (await as(alice).get('/api/v2.6/applications/notes')).body;
    expect(updated).toEqual(expect.objectContaining({ needsUpdating: true }));
    expect(updated.application.info.version).toBe('2.0.0');
    const id = await instanceId(alice);
    const app = await gw.db.application.findUniqueOrThrow({ where: { instanceId_appId: { instanceId: id, appId: 'notes' } } });
    // Consent was for version 1: the grants do not change behind the owner's back.
    expect(await gw.db.dataGrant.count({ where: { instanceId: id, userId: app.userId as string, namespace: 'diary' } })).toBe(0);

    const setup = await as(alice).post('/api/v2.6/applications/notes/setup');
    expect(setup.body).toEqual(expect.objectContaining({ needsUpdating: false }));
    expect(setup.body.application.info.version).toBe('2.0.0');
    const grants = await gw.db.dataGrant.findMany({ where: { instanceId: id, userId: app.userId as string } });
    expect(grants.map((g) => `${g.access} ${g.namespace}/${g.endpoint}`).sort()).toEqual(['read diary/*', 'read notes/*', 'write notes/*']);
  });
});
