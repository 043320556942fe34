// The original HAT's remaining routes, answered as its clients parse them (issue 22): the web app
// rumpel-react (public profile, consent screens, action reports, tools), the iOS SDK HatForIOS (action
// log, phata structure) and the Scala client (user update), and the /api/v2 and /api/v2.0 prefixes.
import request from 'supertest';
import type { SigningKeys } from '@pds/tokens';
import { addUser, callerRequests, signUp, STRONG_PASSWORD, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { V20_ROUTES } from '../src/hat/legacy-prefixes';
import { appRecord, push, pushToken, startGatewayWithDex } from './apps-fixtures';
import { uploadFile } from './files-support';

let gw: TestGateway;
let dex: SigningKeys;
let alice: SignedUp;
let carol: { userId: string; token: string };
let owner: ReturnType<typeof callerRequests>;
const anonymous = (path: string) => request(gw.app).get(path).set('Host', alice.address);

beforeAll(async () => {
  ({ gw, dex } = await startGatewayWithDex());
  alice = await signUp(gw.app, 'alice');
  carol = await addUser(gw.app, alice, 'carol');
  owner = callerRequests(gw.app, alice, alice.address);
});
afterAll(() => gw.close());

describe('small routes', () => {
  it('GET /api/v2.6/version answers {Version} without a token', async () => {
    expect((await anonymous('/api/v2.6/version').expect(200)).body).toEqual({ Version: 'v2.6' });
  });

  it('POST /api/v2.6/report-frontend-action answers "<actionCode> logged" to any account, 401 without a token', async () => {
    // HATLogEvent of the iOS SDK and rumpel-react's report: actionCode, message, logGroup.
    const body = { actionCode: 'hatlogin-success', message: 'from the test', logGroup: 'STATS' };
    for (const token of [alice.token, carol.token]) {
      const res = await request(gw.app)
        .post('/api/v2.6/report-frontend-action')
        .set('Host', alice.address)
        .set('X-Auth-Token', token)
        .send(body);
      expect([res.status, res.body]).toEqual([200, { message: 'hatlogin-success logged' }]);
    }
    await request(gw.app).post('/api/v2.6/report-frontend-action').set('Host', alice.address).send(body).expect(401);
    await owner.post('/api/v2.6/report-frontend-action').send({ message: 'no code' }).expect(400);
  });

  it('GET /api/v2.6/she/function answers [] (rumpel-react lists no tools), under the older prefixes too', async () => {
    for (const prefix of ['/api/v2.6', '/api/v2', '/api/v2.0'])
      expect((await owner.get(`${prefix}/she/function`).expect(200)).body).toEqual([]);
    await callerRequests(gw.app, carol, alice.address).get('/api/v2.6/she/function').expect(403);
  });
});

describe('applications: the consent screens', () => {
  beforeAll(async () => {
    const pushed = await push(gw.app, alice.address, pushToken(gw, dex, alice.address), 'notes', {
      version: 1,
      record: appRecord('notes'),
    });
    expect(pushed.status).toBe(200);
  });

  it('GET /applications/:id/hmi answers the Application without a token (HatApplicationContent of rumpel-react)', async () => {
    const res = await anonymous('/api/v2.6/applications/notes/hmi').expect(200);
    expect(res.body).toMatchObject({
      id: 'notes',
      kind: { kind: 'App', url: 'https://notes.example/' },
      info: {
        version: '1.0.0',
        name: 'The notes app',
        description: { text: expect.any(String) },
        graphics: { logo: { normal: expect.any(String) } },
      },
      permissions: { rolesGranted: expect.arrayContaining([{ role: 'namespacewrite', detail: 'notes' }]) },
      setup: { kind: 'External', url: 'https://notes.example/' },
    });
    // The consent data only: nothing of the owner's setup.
    expect(res.body).not.toHaveProperty('enabled');
    const unknown = await anonymous('/api/v2.6/applications/random-id/hmi').expect(404);
    expect(unknown.body.message).toBe('Application configuration for ID random-id could not be found');
  });

  it('GET /applications/hmi lists the HatApplications for the owner (rumpel-react sends ?applicationId=), 401 without a token', async () => {
    const res = await owner.get('/api/v2.6/applications/hmi?applicationId=notes').expect(200);
    expect(res.body).toEqual([
      expect.objectContaining({ application: expect.objectContaining({ id: 'notes' }), setup: false, enabled: false }),
    ]);
    await anonymous('/api/v2.6/applications/hmi').expect(401);
  });
});

describe('the public profile', () => {
  it('publishes nothing until the owner does: no notes and no profile field', async () => {
    expect((await anonymous('/api/v2.6/phata/profile').expect(200)).body).toEqual({ notables: [], profile: [] });
    const mine = await owner.get('/api/v2.6/profile').expect(200);
    expect(mine.body.published).toEqual([]);
    expect(mine.body.profile.personal).toMatchObject({ firstName: '', lastName: '' });
  });

  it('shows the fields the owner publishes, nested as rumpel-react reads them (profile[0].data.personal.firstName)', async () => {
    const body = {
      profile: {
        personal: { firstName: 'Alice', lastName: 'Liddell' },
        online: { website: 'https://alice.example' },
        about: { body: 'Hi' },
      },
      published: ['personal.firstName', 'online.website'],
    };
    const saved = await owner.put('/api/v2.6/profile').send(body).expect(200);
    expect(saved.body.published).toEqual(['personal.firstName', 'online.website']);
    expect(saved.body.profile.personal).toMatchObject({ firstName: 'Alice', lastName: 'Liddell', title: '' });

    const res = await anonymous('/api/v2.6/phata/profile').expect(200);
    expect(res.body.notables).toEqual([]);
    expect(res.body.profile).toHaveLength(1);
    expect(res.body.profile[0]).toEqual({
      endpoint: 'rumpel/profile',
      recordId: expect.any(String),
      data: { personal: { firstName: 'Alice' }, online: { website: 'https://alice.example' } },
    });
    // The iOS SDK reads the published fields from the bundle structure's mapping (jsonb keeps no key order).
    const structure = await owner.get('/api/v2.6/data-bundle/phata/structure').expect(200);
    expect(Object.keys(structure.body.bundle.profile.endpoints[0].mapping).sort()).toEqual(['online.website', 'personal.firstName']);
    // The owner reads it all back.
    expect((await owner.get('/api/v2.6/profile').expect(200)).body).toEqual(saved.body);
  });

  it("shows what the original's clients publish their way: a rumpel/profile record, the phata bundle and shared notes", async () => {
    await owner
      .post('/api/v2.6/data/rumpel/profile')
      .send({ dateCreated: 4102444800, shared: true, personal: { lastName: 'Pleasance' } })
      .expect(201);
    const notables = {
      endpoints: [
        {
          endpoint: 'rumpel/notablesv1',
          filters: [
            { field: 'shared', operator: { operator: 'contains', value: true } },
            { field: 'shared_on', operator: { operator: 'contains', value: 'phata' } },
          ],
          mapping: { message: 'message', shared_on: 'shared_on' },
        },
      ],
    };
    const profile = {
      endpoints: [{ endpoint: 'rumpel/profile', mapping: { 'personal.lastName': 'personal.lastName' } }],
      orderBy: 'dateCreated',
      ordering: 'descending',
      limit: 1,
    };
    await owner.post('/api/v2.6/data-bundle/phata').send({ name: 'phata', bundle: { notables, profile } }).expect(201);
    await owner
      .post('/api/v2.6/data/rumpel/notablesv1')
      .send([
        { message: 'public note', shared: true, shared_on: ['phata'] },
        { message: 'private note', shared: false, shared_on: [] },
      ])
      .expect(201);

    const res = await anonymous('/api/v2.6/phata/profile').expect(200);
    expect(res.body.profile.map((r: { data: unknown }) => r.data)).toEqual([{ personal: { lastName: 'Pleasance' } }]);
    expect(res.body.notables.map((r: { data: unknown }) => r.data)).toEqual([{ message: 'public note', shared_on: ['phata'] }]);
    expect((await owner.get('/api/v2.6/profile').expect(200)).body).toMatchObject({
      published: ['personal.lastName'],
      profile: { personal: { lastName: 'Pleasance', firstName: '' } },
    });
    // Under the older prefixes too, and for any caller.
    await request(gw.app).get('/api/v2/phata/profile').set('Host', alice.address).set('X-Auth-Token', carol.token).expect(200);
  });

  it('publishing no field keeps the notes and drops the profile; only the owner edits; unknown fields are refused', async () => {
    await owner.put('/api/v2.6/profile').send({ profile: {}, published: [] }).expect(200);
    const res = await anonymous('/api/v2.6/phata/profile').expect(200);
    expect(Object.keys(res.body)).toEqual(['notables']);
    expect(res.body.notables).toHaveLength(1);
    await callerRequests(gw.app, carol, alice.address).put('/api/v2.6/profile').send({ profile: {}, published: [] }).expect(403);
    await callerRequests(gw.app, carol, alice.address).get('/api/v2.6/profile').expect(403);
    for (const body of [
      { profile: { personal: { shoeSize: '9' } }, published: [] },
      { profile: {}, published: ['personal.shoeSize'] },
      { profile: { personal: { firstName: 7 } }, published: [] },
    ]) {
      await owner.put('/api/v2.6/profile').send(body).expect(400);
    }
  });
});

describe('PUT /users/user/:id/update', () => {
  it("changes a user's e-mail and name from the original's User body, answering 201", async () => {
    const body = { userId: carol.userId, email: 'carol@example.com', pass: 'ignored', name: 'Carol Example', role: 'dataDebit', roles: [] };
    const res = await owner.put(`/users/user/${carol.userId}/update`).send(body).expect(201);
    expect(res.body).toMatchObject({
      userId: carol.userId,
      username: 'carol',
      email: 'carol@example.com',
      fullName: 'Carol Example',
      enabled: true,
    });
    // The password was not changed: carol still logs in with hers.
    await request(gw.app)
      .get('/users/access_token')
      .set('Host', alice.address)
      .set('username', 'carol')
      .set('password', STRONG_PASSWORD)
      .expect(200);
    const cleared = await owner.put(`/users/user/${carol.userId}/update`).send({ email: null }).expect(201);
    expect(cleared.body).not.toHaveProperty('email');
    expect(cleared.body.fullName).toBe('Carol Example');
  });

  it('refuses a body naming another user (400), the owner or an unknown user, and non-owners', async () => {
    await owner.put(`/users/user/${carol.userId}/update`).send({ userId: alice.userId, name: 'x' }).expect(400);
    await owner.put(`/users/user/${alice.userId}/update`).send({ name: 'Queen' }).expect(403);
    await owner.put('/users/user/00000000-0000-4000-8000-000000000000/update').send({ name: 'x' }).expect(404);
    await owner.put(`/users/user/${carol.userId}/update`).send({ email: 'not an address' }).expect(400);
    await callerRequests(gw.app, carol, alice.address).put(`/users/user/${carol.userId}/update`).send({ name: 'Me' }).expect(403);
  });
});

describe('the /api/v2 and /api/v2.0 prefixes', () => {
  it("serve every route of the original's v2.0 routes that this cluster has, and only those", () => {
    const served = new Set(
      gw.routes.flatMap((route) => (typeof route.path === 'string' ? [route.path] : route.path).map((path) => `${route.method} ${path}`)),
    );
    for (const route of V20_ROUTES) {
      const [method, path] = route.split(' ') as [string, string];
      expect([route, ['/api/v2.6', '/api/v2', '/api/v2.0'].every((prefix) => served.has(`${method} ${prefix}${path}`))]).toEqual([
        route,
        true,
      ]);
    }
    // Not in the original's v2.0: the record by id, the consent screens, the version.
    for (const path of ['/data-record/:recordId', '/applications/hmi', '/applications/:appId/hmi', '/version']) {
      expect(served.has(`get /api/v2${path}`)).toBe(false);
    }
  });

  it('answer as /api/v2.6 does: files and data', async () => {
    const file = await uploadFile(gw, alice, { name: 'old.txt', source: 'legacy' });
    for (const prefix of ['/api/v2', '/api/v2.0']) {
      const found = await owner.post(`${prefix}/files/search`).send({ source: 'legacy' }).expect(200);
      expect(found.body.map((f: { fileId: string }) => f.fileId)).toEqual([file.fileId]);
      await owner.get(`${prefix}/files/file/${file.fileId}`).expect(200);
      await owner.post(`${prefix}/data/legacy/items`).send({ via: prefix }).expect(201);
    }
    const records = await owner.get('/api/v2.6/data/legacy/items').expect(200);
    expect(records.body.map((r: { data: { via: string } }) => r.data.via)).toEqual(['/api/v2', '/api/v2.0']);
    await owner.get('/api/v2/data-record/00000000-0000-4000-8000-000000000000').expect(404);
  });
});
