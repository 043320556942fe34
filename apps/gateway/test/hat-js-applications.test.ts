// applications() of the published client, unchanged: the owner lists apps in HAT's HatApplication shape,
// getAppStatus walks untouched → goto / fetching → running → update → failing as the state really
// changes, and the setup URL leads to the login page whose API hands the token only to the app's origin.
import type { HatApplication } from '@dataswift/hat-js/lib/interfaces/hat-application.interface';
import request from 'supertest';
import { callerRequests } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, push, pushToken } from './apps-fixtures';
import { failure, hatClient, serveForHatJs } from './hat-js-support';

const { gw, dex, owners } = useGateway({ dex: true, owners: ['alice'] });
const { alice } = owners;
let served: { close(): Promise<void> };

beforeAll(async () => {
  served = await serveForHatJs(gw);
  const records = [
    appRecord('notes', { category: 'app', dataRead: ['fitness/steps'], authUrl: '/auth', description: 'Keeps <notes>' }),
    appRecord('plug', { category: 'dataPlug' }),
  ];
  for (const record of records) {
    await push(gw.app, alice.address, pushToken(gw, dex, alice.address), record.namespace, { version: 1, record }).expect(200);
  }
});
afterAll(() => served.close());

const owner = () => callerRequests(gw.app, alice, alice.address);
const apps = () => hatClient(alice.token).applications();
const byId = async (id: string) => (await apps().getById(id)).parsedBody as HatApplication;
const status = async (id: string) => apps().getAppStatus(await byId(id));

describe('hat-js applications()', () => {
  it('getAll and getAllDefault list the pushed apps as HatApplications', async () => {
    const all = (await apps().getAll({})).parsedBody as HatApplication[];
    expect(all.map((a) => a.application.id)).toEqual(['notes', 'plug']);
    expect((await apps().getAllDefault()).parsedBody).toEqual(all);
    const notes = all[0] as HatApplication;
    expect(notes).toEqual({ application: expect.any(Object), setup: false, enabled: false, active: false });
    expect(notes.application).toEqual(
      expect.objectContaining({
        id: 'notes',
        kind: { kind: 'App', url: 'https://notes.example/' },
        developer: expect.objectContaining({ url: 'https://notes.example' }),
        setup: expect.objectContaining({
          kind: 'External',
          url: 'https://notes.example/auth',
          validRedirectUris: ['https://notes.example'],
        }),
        status: expect.objectContaining({ kind: 'Internal', compatibility: '1.0.0' }),
      }),
    );
    expect(notes.application.info).toEqual(
      expect.objectContaining({
        version: '1.0.0',
        name: 'The notes app',
        description: { text: 'Keeps <notes>', markdown: 'Keeps <notes>', html: '<p>Keeps &#60;notes&#62;</p>' },
        graphics: {
          banner: { normal: 'https://notes.example/logo.png' },
          logo: { normal: 'https://notes.example/logo.png' },
          screenshots: [],
        },
      }),
    );
    expect(notes.application.permissions.rolesGranted).toEqual([
      { role: 'namespacewrite', detail: 'notes' },
      { role: 'namespaceread', detail: 'notes' },
      { role: 'namespaceread', detail: 'fitness/steps' },
    ]);
    expect(notes.application.permissions.dataRequired?.bundle).toEqual({
      name: 'app-notes',
      bundle: { 'fitness/steps': { endpoints: [{ endpoint: 'fitness/steps' }] } },
    });
    expect(all[1]?.application.kind.kind).toBe('DataPlug');
    expect(all[1]?.application.permissions.dataRequired).toBeUndefined();
  });

  it('getById answers one app; an unknown one is a 404 the client rejects', async () => {
    expect((await byId('plug')).application.id).toBe('plug');
    expect((await failure(apps().getById('nope'))).status).toBe(404);
  });

  it('getAppStatus: untouched, then goto for an App once set up (its data debit enabled)', async () => {
    expect(await status('notes')).toBe('untouched');
    await owner().get('/api/v2.6/applications/notes/setup').expect(200);
    expect(await status('notes')).toBe('goto');
    const app = await byId('notes');
    expect(app).toEqual(expect.objectContaining({ setup: true, enabled: true, active: true, needsUpdating: false }));
    const debit = await gw.db.dataDebit.findFirstOrThrow({ where: { key: 'app-notes' }, include: { permissions: true } });
    const account = await gw.db.application.findFirstOrThrow({ where: { appId: 'notes' } });
    expect(debit.holderId).toBe(account.userId);
    expect(debit.permissions.map((p) => [p.accepted, p.canceledAt])).toEqual([[true, null]]);
  });

  it('getAppStatus: a DataPlug is fetching until its namespace holds data, then running with mostRecentData', async () => {
    await owner().post('/api/v2.6/applications/plug/setup').expect(200);
    expect(await status('plug')).toBe('fetching');
    expect((await byId('plug')).mostRecentData).toBeUndefined();
    gw.clock.advance(60);
    await owner().post('/api/v2.6/data/plug/events').send({ e: 1 }).expect(201);
    const plug = await byId('plug');
    const newest = await gw.db.dataRecord.findFirstOrThrow({ where: { namespace: 'plug' } });
    expect(plug.mostRecentData).toBe(newest.createdAt.toISOString());
    expect(apps().getAppStatus(plug)).toBe('running');
  });

  it('getAppStatus: update once dex pushes a newer version than the one set up, until set up again', async () => {
    const v2 = appRecord('notes', { category: 'app', dataRead: ['fitness/steps'], authUrl: '/auth' });
    await push(gw.app, alice.address, pushToken(gw, dex, alice.address), 'notes', { version: 2, record: v2 }).expect(200);
    expect(await status('notes')).toBe('update');
    expect((await byId('notes')).needsUpdating).toBe(true);
    await owner().get('/api/v2.6/applications/notes/setup').expect(200);
    expect(await status('notes')).toBe('goto');
    expect((await gw.db.application.findFirstOrThrow({ where: { appId: 'notes' } })).setupVersion).toBe(2);
  });

  it('getAppStatus: failing while enabled but its data debit is not active; untouched once disabled', async () => {
    await owner().get('/api/v2.6/data-debit/app-notes/disable').expect(200);
    expect(await byId('notes')).toEqual(expect.objectContaining({ enabled: true, active: false }));
    expect(await status('notes')).toBe('failing');
    await owner().get('/api/v2.6/applications/notes/disable').expect(200);
    expect(await byId('notes')).toEqual(expect.objectContaining({ setup: true, enabled: false, active: false }));
    expect(await status('notes')).toBe('untouched');
    // Setup again enables the debit again.
    await owner().get('/api/v2.6/applications/notes/setup').expect(200);
    expect(await status('notes')).toBe('goto');
  });

  it("getSetupUrl sends the user to the instance's #/hatlogin page with the app's setup url", async () => {
    const url = apps().getSetupUrl(await byId('notes'), 'https://notes.example/done', 'https://notes.example/fail');
    expect(url).toBe(
      `http://${alice.address}/#/hatlogin?name=notes&fallback=https://notes.example/fail&redirect=https://notes.example/auth%3Fredirect=https://notes.example/done`,
    );
  });
});

describe('the #/hatlogin page API: GET /api/v2.6/applications/:id/hatlogin?redirect=', () => {
  it("hands the owner an app token and the redirect carrying it, for a redirect on the app's origin", async () => {
    const res = await owner().get(
      `/api/v2.6/applications/notes/hatlogin?redirect=${encodeURIComponent('https://notes.example/auth?redirect=https://notes.example/done')}`,
    );
    expect(res.status).toBe(200);
    const redirect = new URL(res.body.redirect);
    expect(redirect.origin).toBe('https://notes.example');
    expect(redirect.searchParams.get('redirect')).toBe('https://notes.example/done');
    expect(redirect.searchParams.get('token')).toBe(res.body.accessToken);
    const claims = JSON.parse(Buffer.from(String(res.body.accessToken).split('.')[1] as string, 'base64url').toString());
    expect(claims).toEqual(expect.objectContaining({ application: 'notes', iss: alice.address }));
  });

  it('refuses a foreign origin, a malformed redirect, an app not set up, and anyone but the owner', async () => {
    const foreign = await owner().get(
      `/api/v2.6/applications/notes/hatlogin?redirect=${encodeURIComponent('https://evil.example/notes.example')}`,
    );
    expect(foreign.status).toBe(400);
    expect(foreign.body).toEqual({ error: 'Bad Request', message: 'redirect: https://evil.example is not an origin of application notes' });
    expect(foreign.body.accessToken).toBeUndefined();
    expect((await owner().get('/api/v2.6/applications/notes/hatlogin?redirect=notes.example')).status).toBe(400);
    expect((await owner().get('/api/v2.6/applications/notes/hatlogin')).status).toBe(400);
    // An authUrl that would leave the app's origin does not widen where tokens may go.
    const sneaky = appRecord('sneaky', { authUrl: '//evil.example/login' });
    await push(gw.app, alice.address, pushToken(gw, dex, alice.address), 'sneaky', { version: 1, record: sneaky }).expect(200);
    await owner().get('/api/v2.6/applications/sneaky/setup').expect(200);
    expect((await byId('sneaky')).application.setup).toEqual(
      expect.objectContaining({ url: 'https://sneaky.example/', validRedirectUris: ['https://sneaky.example'] }),
    );
    expect(
      (await owner().get(`/api/v2.6/applications/sneaky/hatlogin?redirect=${encodeURIComponent('https://evil.example/login')}`)).status,
    ).toBe(400);
    await owner().get('/api/v2.6/applications/plug/disable').expect(200);
    expect((await owner().get(`/api/v2.6/applications/plug/hatlogin?redirect=${encodeURIComponent('https://plug.example/')}`)).status).toBe(
      409,
    );
    const app = (await owner().get('/api/v2.6/applications/notes/access-token')).body as { accessToken: string };
    const asApp = await request(gw.app)
      .get(`/api/v2.6/applications/notes/hatlogin?redirect=${encodeURIComponent('https://notes.example/')}`)
      .set('Host', alice.address)
      .set('X-Auth-Token', app.accessToken);
    expect(asApp.status).toBe(403);
  });
});
