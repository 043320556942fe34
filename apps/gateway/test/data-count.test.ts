// GET /api/v2.6/data-count/:namespace/*endpoint: how many records a table holds, under the rules of reading it.
import { addUser, callerRequests, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { startFilesGateway } from './files-support';

let gw: TestGateway;
let alice: SignedUp;
let bob: SignedUp;

beforeAll(async () => {
  gw = await startFilesGateway('local');
  alice = await signUp(gw.app, 'alice');
  bob = await signUp(gw.app, 'bob');
});
afterAll(() => gw.close());

const as = (who: { token: string }, host = alice.address) => callerRequests(gw.app, who, host);

it('counts a table’s records, of this instance and this table only', async () => {
  const owner = as(alice);
  expect((await owner.get('/api/v2.6/data-count/fitness/steps')).body).toEqual({ count: 0 });
  const records = Array.from({ length: 31 }, (_, i) => ({ steps: i }));
  expect((await owner.post('/api/v2.6/data/fitness/steps').send(records)).status).toBe(201);
  expect((await owner.post('/api/v2.6/data/fitness/steps/daily').send({ steps: 1 })).status).toBe(201);
  expect((await as(bob, bob.address).post('/api/v2.6/data/fitness/steps').send({ steps: 5 })).status).toBe(201);
  const counted = await owner.get('/api/v2.6/data-count/fitness/steps');
  expect(counted.status).toBe(200);
  expect(counted.body).toEqual({ count: 31 });
  // An endpoint of several segments is a table of its own.
  expect((await owner.get('/api/v2.6/data-count/fitness/steps/daily')).body).toEqual({ count: 1 });
  expect((await as(bob, bob.address).get('/api/v2.6/data-count/fitness/steps')).body).toEqual({ count: 1 });
});

it('refuses a caller who may not read the table as the table itself does, and bad names with 400', async () => {
  const carol = await addUser(gw.app, alice, 'carol');
  const listed = await as(carol).get('/api/v2.6/data/fitness/steps');
  const counted = await as(carol).get('/api/v2.6/data-count/fitness/steps');
  expect(listed.status).toBeGreaterThanOrEqual(400);
  expect({ status: counted.status, body: counted.body }).toEqual({ status: listed.status, body: listed.body });
  expect((await as({ token: '' }).get('/api/v2.6/data-count/fitness/steps')).status).toBe(401);
  expect((await as(alice).get(`/api/v2.6/data-count/fitness/${'x'.repeat(300)}`)).status).toBe(400);
});
