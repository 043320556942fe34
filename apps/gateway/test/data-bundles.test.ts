// Bundles: the owner's named queries over the data tables, evaluated in SQL: the original's filter
// operators, mapping, links, orderBy / ordering / limit; bounded input, owner only.
import { callerRequests } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, installApp } from './apps-fixtures';

const { gw, dex, owners } = useGateway({ dex: true, owners: ['alice', 'bob'] });
const { alice, bob } = owners;
let linkedPost: string;

const owner = () => callerRequests(gw.app, alice, alice.address);

beforeAll(async () => {
  await owner()
    .post('/api/v2.6/data/social/posts')
    .send([
      { text: 'Morning run along the river', likes: 12, tags: ['run', 'river'], at: '2026-03-01', author: { name: 'alice' } },
      { text: 'Quiet evening with a book', likes: 3, tags: ['book'], at: '2026-03-02', author: { name: 'alice' } },
      { text: 'Long run in the rain', likes: 40, tags: ['run'], at: '2026-03-05', author: { name: 'bea' } },
      { text: 'No likes yet', tags: [], at: '2026-03-06' },
    ])
    .expect(201);
  await owner().post('/api/v2.6/data/social/comments').send({ text: 'first comment', likes: 1 }).expect(201);
  // Unix seconds: 2026-03-01 00:00 and 11:00 UTC, and values that are no timestamp.
  await owner()
    .post('/api/v2.6/data/social/checkins')
    .send([{ ts: 1772323200 }, { ts: 1772362800 }, { ts: 'soon' }, { ts: 1e15 }])
    .expect(201);
  await owner().post('/api/v2.6/data/social/baddates').send({ at: 'not a date' }).expect(201);
  // Bob's data with the same names must never appear in Alice's bundles.
  await callerRequests(gw.app, bob, bob.address)
    .post('/api/v2.6/data/social/posts')
    .send({ text: 'Bob run', likes: 99, tags: ['run'] })
    .expect(201);
  const batch = await owner()
    .post('/api/v2.6/data-batch')
    .send([
      {
        endpoint: 'social/posts',
        data: { text: 'Photo post', likes: 5, tags: ['photo'] },
        links: [{ endpoint: 'social/places', data: { place: 'Lisbon' } }],
      },
    ])
    .expect(201);
  linkedPost = batch.body[0].recordId;
});

async function evaluate(bundle: Record<string, unknown>, name = 'b') {
  await owner().post(`/api/v2.6/data-bundle/${name}`).send({ name, bundle }).expect(201);
  const res = await owner().get(`/api/v2.6/data-bundle/${name}`);
  expect(res.status).toBe(200);
  return res.body as Record<string, { endpoint: string; recordId: string; data: Record<string, unknown>; links?: { data: unknown }[] }[]>;
}

const texts = (records: { data: Record<string, unknown> }[] | undefined) => (records ?? []).map((r) => r.data.text);
const posts = (filters: unknown[], extra: Record<string, unknown> = {}) => ({
  p: { endpoints: [{ endpoint: 'social/posts', filters }], ...extra },
});

describe('bundle filters (the original operators)', () => {
  it('contains: a field holding the value (array element or equal value)', async () => {
    expect(texts((await evaluate(posts([{ field: 'tags', operator: { operator: 'contains', value: 'run' } }]))).p)).toEqual([
      'Morning run along the river',
      'Long run in the rain',
    ]);
    expect(texts((await evaluate(posts([{ field: 'author.name', operator: { operator: 'contains', value: 'bea' } }]))).p)).toEqual([
      'Long run in the rain',
    ]);
  });

  it('in: a field whose value is one of the list', async () => {
    expect(texts((await evaluate(posts([{ field: 'likes', operator: { operator: 'in', value: [3, 40] } }]))).p)).toEqual([
      'Quiet evening with a book',
      'Long run in the rain',
    ]);
  });

  it('between: numbers and strings, bounds included', async () => {
    expect(texts((await evaluate(posts([{ field: 'likes', operator: { operator: 'between', lower: 5, upper: 12 } }]))).p)).toEqual([
      'Morning run along the river',
      'Photo post',
    ]);
    expect(
      texts((await evaluate(posts([{ field: 'at', operator: { operator: 'between', lower: '2026-03-02', upper: '2026-03-05' } }]))).p),
    ).toEqual(['Quiet evening with a book', 'Long run in the rain']);
  });

  it('find: words in a text field; several filters must all hold', async () => {
    expect(texts((await evaluate(posts([{ field: 'text', operator: { operator: 'find', search: 'run' } }]))).p)).toEqual([
      'Morning run along the river',
      'Long run in the rain',
    ]);
    const both = posts([
      { field: 'text', transformation: { transformation: 'searchable' }, operator: { operator: 'find', search: 'run' } },
      { field: 'likes', transformation: { transformation: 'identity' }, operator: { operator: 'between', lower: 20, upper: 100 } },
    ]);
    expect(texts((await evaluate(both)).p)).toEqual(['Long run in the rain']);
  });
});

describe('bundle filter transformations (date parts)', () => {
  const filtered = (endpoint: string, filter: unknown) => ({ p: { endpoints: [{ endpoint, filters: [filter] }] } });

  it('datetimeExtract compares a part of an ISO date string', async () => {
    const values = await evaluate(
      filtered('social/posts', {
        field: 'at',
        transformation: { transformation: 'datetimeExtract', part: 'day' },
        operator: { operator: 'between', lower: 2, upper: 5 },
      }),
    );
    expect(texts(values.p)).toEqual(['Quiet evening with a book', 'Long run in the rain']);
  });

  it('timestampExtract compares a part of Unix seconds (in UTC); values that are no timestamp never match', async () => {
    const values = await evaluate(
      filtered('social/checkins', {
        field: 'ts',
        transformation: { transformation: 'timestampExtract', part: 'hour' },
        operator: { operator: 'in', value: [11] },
      }),
    );
    expect(values.p?.map((r) => r.data.ts)).toEqual([1772362800]);
  });

  it('a stored value that is not a date is a 400, not a 500', async () => {
    const bundle = filtered('social/baddates', {
      field: 'at',
      transformation: { transformation: 'datetimeExtract', part: 'year' },
      operator: { operator: 'in', value: [2026] },
    });
    await owner().post('/api/v2.6/data-bundle/dates').send({ name: 'dates', bundle }).expect(201);
    const res = await owner().get('/api/v2.6/data-bundle/dates');
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/not a date/);
  });
});

describe('bundle shape', () => {
  it('orderBy / ordering / limit across several endpoints, records without the field last', async () => {
    const bundle = {
      p: { endpoints: [{ endpoint: 'social/posts' }, { endpoint: 'social/comments' }], orderBy: 'likes', ordering: 'descending', limit: 4 },
    };
    const values = (await evaluate(bundle)).p ?? [];
    expect(values.map((r) => r.data.likes)).toEqual([40, 12, 5, 3]);
    const ascending = (await evaluate({ p: { ...bundle.p, ordering: 'ascending', limit: 10 } })).p ?? [];
    expect(ascending.map((r) => r.data.likes)).toEqual([1, 3, 5, 12, 40, undefined]);
    expect(ascending.map((r) => r.endpoint)).toContain('social/comments');
  });

  it('mapping picks and renames fields; a namespace alone covers all its endpoints; properties are separate', async () => {
    const values = await evaluate({
      short: {
        endpoints: [
          {
            endpoint: 'social/posts',
            mapping: { words: 'text', who: 'author.name' },
            filters: [{ field: 'likes', operator: { operator: 'in', value: [40] } }],
          },
        ],
      },
      everything: { endpoints: [{ endpoint: 'social' }], limit: 100 },
    });
    expect(values.short?.map((r) => r.data)).toEqual([{ words: 'Long run in the rain', who: 'bea' }]);
    expect(values.everything?.length).toBe(12);
  });

  it('links attach the linked records that match the link query', async () => {
    const values = await evaluate({
      p: {
        endpoints: [
          {
            endpoint: 'social/posts',
            filters: [{ field: 'tags', operator: { operator: 'contains', value: 'photo' } }],
            links: [{ endpoint: 'social/places' }],
          },
        ],
      },
    });
    expect(values.p).toEqual([
      {
        endpoint: 'social/posts',
        recordId: linkedPost,
        data: expect.objectContaining({ text: 'Photo post' }),
        links: [{ endpoint: 'social/places', recordId: expect.any(String), data: { place: 'Lisbon' } }],
      },
    ]);
  });

  it("reads only the instance's own records, and stores the structure it was given", async () => {
    const values = await evaluate(posts([{ field: 'likes', operator: { operator: 'between', lower: 90, upper: 100 } }]), 'mine');
    expect(values.p).toEqual([]);
    const structure = await owner().get('/api/v2.6/data-bundle/mine/structure');
    expect(structure.body).toEqual({
      name: 'mine',
      bundle: posts([{ field: 'likes', operator: { operator: 'between', lower: 90, upper: 100 } }]),
    });
    expect((await gw.db.dataBundle.findFirstOrThrow({ where: { name: 'mine' } })).query).toEqual(structure.body.bundle);
  });
});

describe('bundle input and access', () => {
  it.each([
    ['an unknown operator', posts([{ field: 'likes', operator: { operator: 'like', value: 1 } }])],
    [
      'an unknown date part',
      posts([
        { field: 'at', transformation: { transformation: 'datetimeExtract', part: 'fortnight' }, operator: { operator: 'in', value: [1] } },
      ]),
    ],
    [
      'a date part searched with find',
      posts([
        {
          field: 'at',
          transformation: { transformation: 'timestampExtract', part: 'year' },
          operator: { operator: 'find', search: '2026' },
        },
      ]),
    ],
    [
      'searchable with another operator than find',
      posts([{ field: 'likes', transformation: { transformation: 'searchable' }, operator: { operator: 'in', value: [1] } }]),
    ],
    ['a bad endpoint', { p: { endpoints: [{ endpoint: 'Social/posts!' }] } }],
    ['a limit over 1000', posts([], { limit: 5000 })],
    ['no endpoints', { p: { endpoints: [] } }],
    ['a path with empty parts', posts([{ field: 'a..b', operator: { operator: 'contains', value: 1 } }])],
  ])('refuses %s with 400 and stores nothing', async (_what, bundle) => {
    const res = await owner().post('/api/v2.6/data-bundle/bad').send({ name: 'bad', bundle });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Bad Request');
    expect(await gw.db.dataBundle.count({ where: { name: 'bad' } })).toBe(0);
  });

  it('refuses a name that differs from the path, and answers 404 for an unknown bundle', async () => {
    expect(
      (
        await owner()
          .post('/api/v2.6/data-bundle/one')
          .send({ name: 'two', bundle: posts([]) })
      ).status,
    ).toBe(400);
    expect((await owner().get('/api/v2.6/data-bundle/nope')).status).toBe(404);
  });

  it('is the owner’s: an app gets 403 on every bundle and debit management route', async () => {
    const app = await installApp(gw, dex, alice, appRecord('social'));
    const asApp = callerRequests(gw.app, app, alice.address);
    expect((await asApp.post('/api/v2.6/data-bundle/x').send({ name: 'x', bundle: posts([]) })).status).toBe(403);
    expect((await asApp.get('/api/v2.6/data-bundle/b')).status).toBe(403);
    expect((await asApp.get('/api/v2.6/data-debit')).status).toBe(403);
    expect((await asApp.get('/api/v2.6/data-debit/x/enable')).status).toBe(403);
    expect(await gw.db.dataBundle.count({ where: { name: 'x' } })).toBe(0);
  });
});
