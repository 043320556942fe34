// The data permission matrix: every kind of caller against read, write and delete, with the database
// checked after each refusal.
import request from 'supertest';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, installApp } from './apps-fixtures';

const { gw, dex, owners, users } = useGateway({ dex: true, owners: ['alice', 'bob'], users: { carol: 'alice', dave: 'alice' } });
const { alice, bob } = owners;
const { carol, dave } = users;
let aliceInstance: string;
const tokens: Record<string, string | undefined> = {};

beforeAll(async () => {
  aliceInstance = (await gw.db.instance.findUniqueOrThrow({ where: { address: alice.address } })).id;

  tokens.owner = alice.token;
  tokens.notesApp = (await installApp(gw, dex, alice, appRecord('notes', { dataRead: ['calendar'] }))).token;
  tokens.diaryApp = (await installApp(gw, dex, alice, appRecord('diary'))).token;
  tokens.grantedUser = carol.token;
  tokens.plainUser = dave.token;
  tokens.otherInstance = bob.token;
  tokens.anonymous = undefined;

  const grant = (body: object) =>
    request(gw.app)
      .post('/api/v2.6/data-grants')
      .set('Host', alice.address)
      .set('X-Auth-Token', alice.token)
      .send({ userId: carol.userId, ...body })
      .expect(201);
  await grant({ namespace: 'calendar', access: 'read' });
  await grant({ namespace: 'notes', endpoint: 'shared', access: 'write' });
});

const count = (namespace: string, endpoint: string) =>
  gw.db.dataRecord.count({ where: { instanceId: aliceInstance, namespace, endpoint } });

async function seed(namespace: string, endpoint: string): Promise<void> {
  await gw.db.dataRecord.deleteMany({ where: { instanceId: aliceInstance, namespace, endpoint } });
  await gw.db.dataRecord.create({ data: { instanceId: aliceInstance, namespace, endpoint, data: { seeded: true }, bytes: 15 } });
}

function call(action: 'read' | 'write' | 'delete', table: string, token: string | undefined) {
  const path = `/api/v2.6/data/${table}`;
  const req =
    action === 'read'
      ? request(gw.app).get(path)
      : action === 'write'
        ? request(gw.app).post(path).send({ written: true })
        : request(gw.app).delete(path);
  req.set('Host', alice.address);
  return token ? req.set('X-Auth-Token', token) : req;
}

type Row = [caller: string, action: 'read' | 'write' | 'delete', table: string, status: number];

const matrix: Row[] = [
  // The owner reaches everything.
  ['owner', 'read', 'notes/items', 200],
  ['owner', 'write', 'notes/items', 201],
  ['owner', 'delete', 'notes/items', 200],
  ['owner', 'write', 'anything/at-all', 201],
  // An app: its own namespace fully, what it declared read-only, nothing else.
  ['notesApp', 'read', 'notes/items', 200],
  ['notesApp', 'write', 'notes/items', 201],
  ['notesApp', 'delete', 'notes/items', 200],
  ['notesApp', 'read', 'calendar/events', 200],
  ['notesApp', 'write', 'calendar/events', 403],
  ['notesApp', 'delete', 'calendar/events', 403],
  ['notesApp', 'read', 'diary/entries', 403],
  // An app on another namespace, without grants for these tables.
  ['diaryApp', 'read', 'notes/items', 403],
  ['diaryApp', 'write', 'notes/items', 403],
  ['diaryApp', 'delete', 'notes/items', 403],
  ['diaryApp', 'read', 'calendar/events', 403],
  ['diaryApp', 'write', 'diary/entries', 201],
  // A plain user with grants: read calendar, write (not read) notes/shared.
  ['grantedUser', 'read', 'calendar/events', 200],
  ['grantedUser', 'write', 'calendar/events', 403],
  ['grantedUser', 'delete', 'calendar/events', 403],
  ['grantedUser', 'write', 'notes/shared', 201],
  ['grantedUser', 'delete', 'notes/shared', 200],
  ['grantedUser', 'read', 'notes/shared', 403],
  ['grantedUser', 'write', 'notes/items', 403],
  // A plain user without grants.
  ['plainUser', 'read', 'notes/items', 403],
  ['plainUser', 'write', 'notes/items', 403],
  ['plainUser', 'delete', 'notes/items', 403],
  // Another instance's owner token is not a token of this instance.
  ['otherInstance', 'read', 'notes/items', 401],
  ['otherInstance', 'write', 'notes/items', 401],
  ['otherInstance', 'delete', 'notes/items', 401],
  ['anonymous', 'read', 'notes/items', 401],
  ['anonymous', 'write', 'notes/items', 401],
  ['anonymous', 'delete', 'notes/items', 401],
];

describe('data permission matrix', () => {
  it.each(matrix)('%s %s %s → %i', async (caller, action, table, status) => {
    const [namespace, endpoint] = table.split('/') as [string, string];
    await seed(namespace, endpoint);
    const res = await call(action, table, tokens[caller]);
    expect(res.status).toBe(status);

    if (status >= 400) {
      expect(res.body).toEqual({ error: status === 401 ? 'Not Authenticated' : 'Forbidden', message: expect.any(String) });
      expect(await count(namespace, endpoint)).toBe(1);
    } else if (action === 'read') {
      expect(res.body).toEqual([{ endpoint: table, recordId: expect.any(String), data: { seeded: true } }]);
    } else if (action === 'write') {
      expect(res.body).toEqual({ endpoint: table, recordId: expect.any(String), data: { written: true } });
      expect(await count(namespace, endpoint)).toBe(2);
    } else {
      expect(res.body).toEqual({ message: 'All records deleted', deleted: 1 });
      expect(await count(namespace, endpoint)).toBe(0);
    }
  });
});

describe('data grants', () => {
  const owner = () => ({
    post: (body: object) =>
      request(gw.app).post('/api/v2.6/data-grants').set('Host', alice.address).set('X-Auth-Token', alice.token).send(body),
    delete: (body: object) =>
      request(gw.app).delete('/api/v2.6/data-grants').set('Host', alice.address).set('X-Auth-Token', alice.token).send(body),
  });

  it('revoking a grant takes effect on the next call', async () => {
    const dave = await gw.db.user.findFirstOrThrow({ where: { instanceId: aliceInstance, username: 'dave' } });
    await owner().post({ userId: dave.id, namespace: 'travel', access: 'read' }).expect(201);
    expect((await call('read', 'travel/trips', tokens.plainUser)).status).toBe(200);
    await owner().delete({ userId: dave.id, namespace: 'travel', access: 'read' }).expect(200);
    expect((await call('read', 'travel/trips', tokens.plainUser)).status).toBe(403);
    expect((await owner().delete({ userId: dave.id, namespace: 'travel', access: 'read' })).status).toBe(404);
  });

  it('is owner-only, and only for plain users of this instance', async () => {
    const dave = await gw.db.user.findFirstOrThrow({ where: { instanceId: aliceInstance, username: 'dave' } });
    const app = await gw.db.user.findFirstOrThrow({ where: { instanceId: aliceInstance, username: 'app:diary' } });
    const byCarol = await request(gw.app)
      .post('/api/v2.6/data-grants')
      .set('Host', alice.address)
      .set('X-Auth-Token', tokens.grantedUser as string)
      .send({ userId: dave.id, namespace: 'notes', access: 'write' });
    expect(byCarol.status).toBe(403);
    expect((await owner().post({ userId: app.id, namespace: 'notes', access: 'write' })).status).toBe(400);
    expect((await owner().post({ userId: '00000000-0000-4000-8000-000000000000', namespace: 'notes', access: 'write' })).status).toBe(404);
    expect(
      await gw.db.dataGrant.count({ where: { instanceId: aliceInstance, namespace: 'notes', userId: { in: [dave.id, app.id] } } }),
    ).toBe(0);
  });
});
