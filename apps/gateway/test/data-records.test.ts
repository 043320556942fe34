import request from 'supertest';
import { callerRequests } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { MAX_RECORD_BYTES } from '../src/data/input';
import { appRecord, installApp } from './apps-fixtures';

const { gw, dex, owners } = useGateway({ dex: true, owners: ['alice', 'bob'] });
const { alice, bob } = owners;

const as = (who: { token: string }, host = alice.address) => callerRequests(gw.app, who, host);

const dataOf = (res: request.Response) => (res.body as { data: unknown }[]).map((r) => r.data);

describe('writing records', () => {
  it('stores one object (201, one record) or an array (201, records in order)', async () => {
    const one = await as(alice).post('/api/v2.6/data/test/one').send({ a: 1 });
    expect(one.status).toBe(201);
    expect(one.body).toEqual({ endpoint: 'test/one', recordId: expect.stringMatching(/^[0-9a-f-]{36}$/), data: { a: 1 } });

    const many = await as(alice)
      .post('/api/v2.6/data/test/many')
      .send([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(many.status).toBe(201);
    expect(dataOf(many)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(new Set(many.body.map((r: { recordId: string }) => r.recordId)).size).toBe(3);
    expect(dataOf(await as(alice).get('/api/v2.6/data/test/many'))).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it.each([
    ['an array with one non-object', [{ ok: 1 }, 'text'], 400, /^body\[1\]: must be a JSON object/],
    ['an array with a NUL character', [{ ok: 1 }, { bad: 'a\u0000b' }], 400, /NUL/],
    ['an array with a record too deep', [{ ok: 1 }, JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`)], 400, /nest/],
    ['an empty array', [], 400, /non-empty/],
    ['a record over the size limit', [{ ok: 1 }, { big: 'x'.repeat(MAX_RECORD_BYTES) }], 413, /at most/],
  ])('refuses %s and stores nothing of it', async (_what, body, status, message) => {
    const res = await as(alice).post('/api/v2.6/data/test/atomic').send(body);
    expect(res.status).toBe(status);
    expect(res.body.message).toMatch(message);
    expect(await gw.db.dataRecord.count({ where: { endpoint: 'atomic' } })).toBe(0);
  });

  it('refuses more than 1000 records in one request', async () => {
    const res = await as(alice)
      .post('/api/v2.6/data/test/atomic')
      .send(Array.from({ length: 1001 }, (_, n) => ({ n })));
    expect(res.status).toBe(400);
    expect(await gw.db.dataRecord.count({ where: { endpoint: 'atomic' } })).toBe(0);
  });

  it.each([
    ['/api/v2.6/data/Bad/ep', /^namespace: /],
    ['/api/v2.6/data/-bad/ep', /^namespace: /],
    ['/api/v2.6/data/ok/bad.ep', /^endpoint: /],
    ['/api/v2.6/data/ok/a/b/c/d/e', /^endpoint: /],
  ])('answers 400 naming the field for %s', async (path, message) => {
    const res = await as(alice).post(path).send({ a: 1 });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(message);
  });

  it('accepts endpoints of several segments, as the original did', async () => {
    const res = await as(alice).post('/api/v2.6/data/social/feed/likes').send({ a: 1 });
    expect(res.status).toBe(201);
    expect(res.body.endpoint).toBe('social/feed/likes');
    expect(dataOf(await as(alice).get('/api/v2.6/data/social/feed/likes'))).toEqual([{ a: 1 }]);
    expect(await as(alice).get('/api/v2.6/data/social/feed').then(dataOf)).toEqual([]);
  });
});

describe('reading records', () => {
  beforeAll(async () => {
    await as(alice)
      .post('/api/v2.6/data/sort/items')
      .send([
        { name: 'c', rank: 3, nested: { at: 30 } },
        { name: 'a', rank: 1, nested: { at: 10 } },
        { name: 'none' },
        { name: 'b', rank: 2, nested: { at: 20 } },
      ])
      .expect(201);
  });

  const names = async (query: string) => {
    const res = await as(alice).get(`/api/v2.6/data/sort/items${query}`);
    expect(res.status).toBe(200);
    return (res.body as { data: { name: string } }[]).map((r) => r.data.name);
  };

  it('answers [] for an unknown endpoint', async () => {
    expect((await as(alice).get('/api/v2.6/data/sort/nothing')).body).toEqual([]);
  });

  it('orders by creation by default, and reverses with ordering=descending', async () => {
    expect(await names('')).toEqual(['c', 'a', 'none', 'b']);
    expect(await names('?ordering=descending')).toEqual(['b', 'none', 'a', 'c']);
  });

  it('orders by a data path, records without it last in both directions', async () => {
    expect(await names('?orderBy=rank')).toEqual(['a', 'b', 'c', 'none']);
    expect(await names('?orderBy=rank&ordering=descending')).toEqual(['c', 'b', 'a', 'none']);
    expect(await names('?orderBy=nested.at&ordering=descending')).toEqual(['c', 'b', 'a', 'none']);
  });

  it('pages with skip and take', async () => {
    expect(await names('?orderBy=rank&take=2')).toEqual(['a', 'b']);
    expect(await names('?orderBy=rank&ordering=descending&skip=1&take=2')).toEqual(['b', 'a']);
    expect(await names('?skip=10')).toEqual([]);
  });

  it('ignores unknown query parameters, a query-string token included (never a filter)', async () => {
    expect(await names('?name=a&rank=1')).toEqual(['c', 'a', 'none', 'b']);
    const viaQuery = await request(gw.app).get(`/api/v2.6/data/sort/items?X-Auth-Token=${alice.token}`).set('Host', alice.address);
    expect(viaQuery.status).toBe(200);
    expect(viaQuery.body).toHaveLength(4);
  });

  it.each([
    ['take=1001', /^take: /],
    ['take=-1', /^take: /],
    ['skip=x', /^skip: /],
    ['take=1&take=2', /^take: /],
    ['orderBy=a..b', /^orderBy: /],
  ])('answers 400 for %s', async (query, message) => {
    const res = await as(alice).get(`/api/v2.6/data/sort/items?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(message);
  });

  it('keeps instances apart: the same table name elsewhere is another table', async () => {
    expect((await as(bob, bob.address).get('/api/v2.6/data/sort/items')).body).toEqual([]);
    await as(bob, bob.address).delete('/api/v2.6/data/sort/items').expect(200);
    expect(await names('')).toHaveLength(4);
  });
});

describe('deleting records', () => {
  it('removes every record of the endpoint and nothing else', async () => {
    await as(alice)
      .post('/api/v2.6/data/del/a')
      .send([{ n: 1 }, { n: 2 }])
      .expect(201);
    await as(alice).post('/api/v2.6/data/del/b').send({ n: 3 }).expect(201);
    const res = await as(alice).delete('/api/v2.6/data/del/a');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'All records deleted', deleted: 2 });
    expect((await as(alice).get('/api/v2.6/data/del/a')).body).toEqual([]);
    expect((await as(alice).get('/api/v2.6/data/del/b')).body).toHaveLength(1);
  });
});

describe('an app disabled mid-session', () => {
  it('is refused on its very next call, and writes nothing', async () => {
    const app = await installApp(gw, dex, alice, appRecord('steps'));
    await as(app).post('/api/v2.6/data/steps/daily').send({ steps: 1000 }).expect(201);
    await as(alice).post('/api/v2.6/applications/steps/disable').expect(200);

    const res = await as(app).post('/api/v2.6/data/steps/daily').send({ steps: 2000 });
    expect(res.status).toBe(401);
    expect((await as(app).get('/api/v2.6/data/steps/daily')).status).toBe(401);
    expect(dataOf(await as(alice).get('/api/v2.6/data/steps/daily'))).toEqual([{ steps: 1000 }]);
  });
});
