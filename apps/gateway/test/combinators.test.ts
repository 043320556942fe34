// Combinators (issue 22): the owner stores endpoint queries under a name, as the original's iOS SDK does
// (`createCombinator`: one endpoint, a `between` filter, optionally a date-part transformation), and
// reads their records with orderBy / ordering / skip / take.
import request from 'supertest';
import { addUser, callerRequests, signUp, startTestGateway, type SignedUp, type TestGateway } from '../../../test/support/gateway';

let gw: TestGateway;
let alice: SignedUp;
let bob: SignedUp;
let owner: ReturnType<typeof callerRequests>;

// Five locations as the iOS app stores them, hours apart (UTC), with a Unix timestamp as well.
const LOCATIONS = [6, 9, 12, 15, 20].map((hour, i) => ({
  n: i + 1,
  dateCreated: `2026-11-2${i}T${String(hour).padStart(2, '0')}:30:00.000Z`,
  timestamp: Date.UTC(2026, 10, 20 + i, hour, 30) / 1000,
}));

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await signUp(gw.app, 'alice');
  bob = await signUp(gw.app, 'bob');
  owner = callerRequests(gw.app, alice, alice.address);
  await owner.post('/api/v2.6/data/rumpel/locations/ios').send(LOCATIONS).expect(201);
  await owner.post('/api/v2.6/data/rumpel/notes').send({ n: 3 }).expect(201);
});
afterAll(() => gw.close());

/** The iOS SDK's body: one endpoint query with a `between` filter on a field. */
function iosCombinator(field: string, lower: number, upper: number, transformation?: { transformation: string; part: string }) {
  return [
    {
      endpoint: 'rumpel/locations/ios',
      filters: [{ field, operator: { operator: 'between', lower, upper }, ...(transformation ? { transformation } : {}) }],
    },
  ];
}

const ns = (res: { body: { data: { n: number } }[] }) => res.body.map((record) => record.data.n);

it('stores a combinator (201) and returns the records its between filter selects, in insertion order', async () => {
  const stored = await owner
    .post('/api/v2.6/combinator/locationsfilter')
    .send(iosCombinator('n', 2, 4))
    .expect(201);
  expect(stored.body).toEqual({ message: 'Combinator locationsfilter registered' });
  const res = await owner.get('/api/v2.6/combinator/locationsfilter').expect(200);
  expect(ns(res)).toEqual([2, 3, 4]);
  expect(res.body[0]).toEqual({ endpoint: 'rumpel/locations/ios', recordId: expect.any(String), data: LOCATIONS[1] });
});

it('orders by a field, either way, and pages with skip and take', async () => {
  expect(ns(await owner.get('/api/v2.6/combinator/locationsfilter?orderBy=n&ordering=descending').expect(200))).toEqual([4, 3, 2]);
  expect(ns(await owner.get('/api/v2.6/combinator/locationsfilter?orderBy=n&ordering=descending&skip=1&take=1').expect(200))).toEqual([3]);
  expect(ns(await owner.get('/api/v2.6/combinator/locationsfilter?skip=2').expect(200))).toEqual([4]);
  expect(ns(await owner.get('/api/v2.6/combinator/locationsfilter?skip=3').expect(200))).toEqual([]);
});

it('filters on a part of a date: datetimeExtract of an ISO date, timestampExtract of Unix seconds', async () => {
  const workingHours = iosCombinator('dateCreated', 9, 16, { transformation: 'datetimeExtract', part: 'hour' });
  await owner.post('/api/v2.6/combinator/working-hours').send(workingHours).expect(201);
  expect(ns(await owner.get('/api/v2.6/combinator/working-hours').expect(200))).toEqual([2, 3, 4]);
  const evenings = iosCombinator('timestamp', 18, 23, { transformation: 'timestampExtract', part: 'hour' });
  await owner.post('/api/v2.6/combinator/locations/evenings').send(evenings).expect(201);
  expect(ns(await owner.get('/api/v2.6/combinator/locations/evenings').expect(200))).toEqual([5]);
});

it('replaces a combinator stored again under its name; several endpoints and the other operators work too', async () => {
  const body = [
    { endpoint: 'rumpel/locations/ios', filters: [{ field: 'n', operator: { operator: 'in', value: [1, 5] } }] },
    { endpoint: 'rumpel/notes', mapping: { count: 'n' } },
  ];
  await owner.post('/api/v2.6/combinator/locationsfilter').send(body).expect(201);
  const res = await owner.get('/api/v2.6/combinator/locationsfilter').expect(200);
  expect(res.body.map((r: { data: object }) => r.data)).toEqual([LOCATIONS[0], LOCATIONS[4], { count: 3 }]);
});

it('answers 404 for a combinator the instance does not have, and keeps instances apart', async () => {
  const res = await owner.get('/api/v2.6/combinator/nothing-here').expect(404);
  expect(res.body).toEqual({ error: 'Not Found', message: 'Combinator nothing-here not found' });
  await callerRequests(gw.app, bob, bob.address).get('/api/v2.6/combinator/working-hours').expect(404);
});

it('is the owner’s: other accounts 403, no token 401', async () => {
  const carol = await addUser(gw.app, alice, 'carol');
  await callerRequests(gw.app, carol, alice.address).get('/api/v2.6/combinator/working-hours').expect(403);
  await callerRequests(gw.app, carol, alice.address)
    .post('/api/v2.6/combinator/mine')
    .send(iosCombinator('n', 1, 2))
    .expect(403);
  await request(gw.app).get('/api/v2.6/combinator/working-hours').set('Host', alice.address).expect(401);
});

it('refuses a body or name it cannot run with 400, and stores nothing', async () => {
  const bad: unknown[] = [
    {},
    [],
    [{ endpoint: 'Not A Table' }],
    [{ endpoint: 'rumpel/locations', filters: [{ field: 'n', operator: { operator: 'near', value: 1 } }] }],
    [
      {
        endpoint: 'rumpel/locations',
        filters: [
          {
            field: 'n',
            transformation: { transformation: 'datetimeExtract', part: 'fortnight' },
            operator: { operator: 'between', lower: 1, upper: 2 },
          },
        ],
      },
    ],
  ];
  for (const body of bad)
    await owner
      .post('/api/v2.6/combinator/broken')
      .send(body as object)
      .expect(400);
  await owner
    .post('/api/v2.6/combinator/UPPER')
    .send(iosCombinator('n', 1, 2))
    .expect(400);
  await owner.get('/api/v2.6/combinator/working-hours?take=1001').expect(400);
  expect(await gw.db.dataCombinator.count({ where: { name: { in: ['broken', 'UPPER'] } } })).toBe(0);
});

it('answers under /api/v2 and /api/v2.0 as the original did', async () => {
  for (const prefix of ['/api/v2', '/api/v2.0']) {
    expect(ns(await owner.get(`${prefix}/combinator/working-hours`).expect(200))).toEqual([2, 3, 4]);
  }
});
