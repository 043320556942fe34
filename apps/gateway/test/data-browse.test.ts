// The owner's data browser: the list of tables and deleting chosen records.
import { addUser, callerRequests, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { appRecord, installApp, startGatewayWithDex } from './apps-fixtures';

let gw: TestGateway;
let alice: SignedUp;
let bob: SignedUp;
let app: { token: string };

beforeAll(async () => {
  let dex;
  ({ gw, dex } = await startGatewayWithDex());
  alice = await signUp(gw.app, 'alice');
  bob = await signUp(gw.app, 'bob');
  app = await installApp(gw, dex, alice, appRecord('notes'));
});
afterAll(() => gw.close());

const as = (who: { token: string }, host = alice.address) => callerRequests(gw.app, who, host);

async function write(endpoint: string, records: object[], who = alice, token = who.token): Promise<string[]> {
  const res = await as({ token }, who.address).post(`/api/v2.6/data/notes/${endpoint}`).send(records);
  if (res.status !== 201) throw new Error(`write failed: ${res.status}`);
  return res.body.map((r: { recordId: string }) => r.recordId);
}

describe('GET /api/v2.6/data/sources', () => {
  it('lists each namespace’s endpoints, and no other instance’s', async () => {
    await write('items', [{ n: 1 }, { n: 2 }], alice, app.token);
    await write('feed/likes', [{ n: 3 }]);
    await write('secret', [{ n: 4 }], bob);
    const res = await as(alice).get('/api/v2.6/data/sources');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ notes: ['feed/likes', 'items'] });
  });

  it('is for the owner only', async () => {
    const carol = await addUser(gw.app, alice, 'carol');
    expect((await as(carol).get('/api/v2.6/data/sources')).status).toBe(403);
    expect((await as(app).get('/api/v2.6/data/sources')).status).toBe(403);
    expect((await as({ token: 'nonsense' }).get('/api/v2.6/data/sources')).status).toBe(401);
  });
});

describe('DELETE /api/v2.6/data?records=', () => {
  it('removes the chosen records and keeps the others', async () => {
    const [first, second, third] = await write('trash', [{ n: 1 }, { n: 2 }, { n: 3 }]);
    const res = await as(alice).delete(`/api/v2.6/data?records=${first},${third}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'All records deleted', deleted: 2 });
    const left = await as(alice).get('/api/v2.6/data/notes/trash');
    expect(left.body.map((r: { recordId: string }) => r.recordId)).toEqual([second]);
  });

  it('cannot reach another instance’s records', async () => {
    const [bobs] = await write('mine', [{ n: 1 }], bob);
    const res = await as(alice).delete(`/api/v2.6/data?records=${bobs}`);
    expect(res.body.deleted).toBe(0);
    expect(await gw.db.dataRecord.count({ where: { recordId: bobs } })).toBe(1);
  });

  it.each([
    ['no records parameter', ''],
    ['an id that is not a record id', '?records=1%27%20OR%201=1'],
    ['an empty id in the list', '?records=,'],
  ])('answers 400 for %s and deletes nothing', async (_what, query) => {
    const before = await gw.db.dataRecord.count();
    const res = await as(alice).delete(`/api/v2.6/data${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Bad Request', message: expect.stringMatching(/records/) });
    expect(await gw.db.dataRecord.count()).toBe(before);
  });

  it('is for the owner only', async () => {
    const [kept] = await write('kept', [{ n: 1 }]);
    expect((await as(app).delete(`/api/v2.6/data?records=${kept}`)).status).toBe(403);
    expect(await gw.db.dataRecord.count({ where: { recordId: kept } })).toBe(1);
  });
});
