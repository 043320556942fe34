// Records by id (read one, update, delete), batches across tables, links, skipErrors and the list of
// tables: status codes and texts as the original, all or nothing, each namespace checked.
import request from 'supertest';
import { addUser, callerRequests } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, installApp } from './apps-fixtures';

const { gw, dex, owners } = useGateway({ dex: true, owners: ['alice', 'bob'] });
const { alice, bob } = owners;
let notes: { token: string; userId: string };
let diary: { token: string; userId: string };

beforeAll(async () => {
  notes = await installApp(gw, dex, alice, appRecord('notes'));
  diary = await installApp(gw, dex, alice, appRecord('diary'));
});

const as = (who: { token: string }, host = alice.address) => callerRequests(gw.app, who, host);
const ids = (res: request.Response) => (res.body as { recordId: string }[]).map((r) => r.recordId);
const stored = (recordIds: string[]) => gw.db.dataRecord.findMany({ where: { recordId: { in: recordIds } }, orderBy: { seq: 'asc' } });

describe('PUT /api/v2.6/data', () => {
  it("replaces the data of the caller's own records (201, in the order given) and records who wrote them", async () => {
    const created = await as(notes)
      .post('/api/v2.6/data/notes/items')
      .send([{ t: 'a' }, { t: 'b' }]);
    const [a, b] = ids(created) as [string, string];
    expect((await stored([a])).map((r) => r.userId)).toEqual([notes.userId]);
    const res = await as(notes)
      .put('/api/v2.6/data')
      .send([
        { endpoint: 'notes/items', recordId: b, data: { t: 'B' } },
        { recordId: a, data: { t: 'A' } },
      ]);
    expect(res.status).toBe(201);
    expect(res.body).toEqual([
      { endpoint: 'notes/items', recordId: b, data: { t: 'B' } },
      { endpoint: 'notes/items', recordId: a, data: { t: 'A' } },
    ]);
    expect((await stored([a, b])).map((r) => r.data)).toEqual([{ t: 'A' }, { t: 'B' }]);
  });

  it("changes nothing when one record is missing or another account's: 400 with the original's text", async () => {
    const [mine] = ids(
      await as(notes)
        .post('/api/v2.6/data/notes/items')
        .send([{ v: 1 }]),
    );
    const [theirs] = ids(
      await as(diary)
        .post('/api/v2.6/data/diary/days')
        .send([{ v: 2 }]),
    );
    for (const other of [theirs, '00000000-0000-4000-8000-000000000000']) {
      const res = await as(notes)
        .put('/api/v2.6/data')
        .send([
          { recordId: mine, data: { v: 'changed' } },
          { recordId: other, data: { v: 'changed' } },
        ]);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Bad Request', message: 'Could not update records: Records missing for updating' });
    }
    expect((await stored([mine as string, theirs as string])).map((r) => r.data)).toEqual([{ v: 1 }, { v: 2 }]);
  });

  it('lets the owner update any record; refuses bad bodies with 400 naming the field', async () => {
    const [r] = ids(
      await as(notes)
        .post('/api/v2.6/data/notes/items')
        .send([{ v: 1 }]),
    );
    expect(
      (
        await as(alice)
          .put('/api/v2.6/data')
          .send([{ recordId: r, data: { v: 'owner' } }])
      ).status,
    ).toBe(201);
    expect((await stored([r as string]))[0]?.data).toEqual({ v: 'owner' });
    for (const [body, message] of [
      [{}, /body/],
      [[], /non-empty/],
      [[{ recordId: 'nope', data: {} }], /recordId/],
      [[{ recordId: r, data: 'text' }], /body\[0\]\.data: must be a JSON object/],
      [
        [
          { recordId: r, data: {} },
          { recordId: r, data: {} },
        ],
        /twice/,
      ],
    ] as const) {
      const res = await as(alice)
        .put('/api/v2.6/data')
        .send(body as object);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    expect((await stored([r as string]))[0]?.data).toEqual({ v: 'owner' });
  });

  it('answers 401 without a token', async () => {
    expect((await request(gw.app).put('/api/v2.6/data').set('Host', alice.address).send([])).status).toBe(401);
  });
});

describe('DELETE /api/v2.6/data?records=', () => {
  it("removes the caller's records, with repeated or comma-separated ids: 200 All records deleted", async () => {
    const created = ids(
      await as(notes)
        .post('/api/v2.6/data/notes/gone')
        .send([{ n: 1 }, { n: 2 }, { n: 3 }]),
    );
    const res = await as(notes).delete(`/api/v2.6/data?records=${created[0]}&records=${created[1]},${created[2]}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'All records deleted', deleted: 3 });
    expect(await stored(created)).toEqual([]);
  });

  it("deletes nothing when one record is another account's or missing (400), or the app lost write there (403)", async () => {
    const [mine] = ids(
      await as(notes)
        .post('/api/v2.6/data/notes/kept')
        .send([{ n: 1 }]),
    );
    const [theirs] = ids(
      await as(diary)
        .post('/api/v2.6/data/diary/kept')
        .send([{ n: 2 }]),
    );
    const res = await as(notes).delete(`/api/v2.6/data?records=${mine}&records=${theirs}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Bad Request', message: 'Could not delete records: Records missing for deleting' });

    // A record the app wrote while it had write access, in a namespace it no longer writes.
    const [old] = ids(
      await as(notes)
        .post('/api/v2.6/data/notes/old')
        .send([{ n: 3 }]),
    );
    await gw.db.dataRecord.update({
      where: {
        instanceId_recordId: {
          instanceId: (await gw.db.instance.findUniqueOrThrow({ where: { address: alice.address } })).id,
          recordId: old as string,
        },
      },
      data: { namespace: 'elsewhere' },
    });
    const denied = await as(notes).delete(`/api/v2.6/data?records=${mine}&records=${old}`);
    expect(denied.status).toBe(403);
    expect((await stored([mine as string, theirs as string, old as string])).length).toBe(3);
  });

  it('refuses a missing or malformed records parameter with 400', async () => {
    for (const query of ['', '?records=', '?records=nope', `?records=${crypto.randomUUID()},nope`]) {
      const res = await as(alice).delete(`/api/v2.6/data${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('Bad Request');
    }
  });
});

describe('GET /api/v2.6/data-record/:recordId', () => {
  it("returns the caller's own record with its links; another account's or a missing one is 400 Data Missing", async () => {
    const [r] = ids(
      await as(notes)
        .post('/api/v2.6/data/notes/one')
        .send([{ x: 1 }]),
    );
    const res = await as(notes).get(`/api/v2.6/data-record/${r}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ endpoint: 'notes/one', recordId: r, data: { x: 1 }, links: [] });
    expect((await as(alice).get(`/api/v2.6/data-record/${r}`)).status).toBe(200);
    const refused = await as(diary).get(`/api/v2.6/data-record/${r}`);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('Could not find unique record: No single record found for provided ID');
    expect((await as(bob, bob.address).get(`/api/v2.6/data-record/${r}`)).status).toBe(400);
    expect((await as(alice).get('/api/v2.6/data-record/not-a-uuid')).status).toBe(400);
  });
});

describe('POST /api/v2.6/data-batch and /data-link', () => {
  it('stores records across tables with linked records, all in one transaction (201)', async () => {
    const res = await as(alice)
      .post('/api/v2.6/data-batch')
      .send([
        { endpoint: 'notes/items', data: { t: 'batch 1' }, links: [{ endpoint: 'diary/days', data: { d: 'linked' } }] },
        { endpoint: 'diary/days', data: { d: 'batch 2' } },
      ]);
    expect(res.status).toBe(201);
    expect(res.body).toEqual([
      {
        endpoint: 'notes/items',
        recordId: expect.any(String),
        data: { t: 'batch 1' },
        links: [{ endpoint: 'diary/days', recordId: expect.any(String), data: { d: 'linked' } }],
      },
      { endpoint: 'diary/days', recordId: expect.any(String), data: { d: 'batch 2' }, links: [] },
    ]);
    const [first] = res.body as { recordId: string; links: { recordId: string }[] }[];
    const fetched = await as(alice).get(`/api/v2.6/data-record/${first?.recordId}`);
    expect(fetched.body.links).toEqual([{ endpoint: 'diary/days', recordId: first?.links[0]?.recordId, data: { d: 'linked' } }]);
    expect(await gw.db.dataRecordLink.count({ where: { recordId: first?.recordId } })).toBe(1);
  });

  it('checks every namespace: an app writing outside its own gets 403 and nothing is stored', async () => {
    const before = await gw.db.dataRecord.count();
    const res = await as(notes)
      .post('/api/v2.6/data-batch')
      .send([
        { endpoint: 'notes/items', data: { t: 'mine' } },
        { endpoint: 'diary/days', data: { d: 'not mine' } },
      ]);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Forbidden', message: 'No write access to data diary/days' });
    const linked = await as(notes)
      .post('/api/v2.6/data-batch')
      .send([{ endpoint: 'notes/items', data: { t: 'mine' }, links: [{ endpoint: 'diary/days', data: {} }] }]);
    expect(linked.status).toBe(403);
    expect(await gw.db.dataRecord.count()).toBe(before);
  });

  it('refuses a bad batch with 400 naming the field, storing nothing', async () => {
    const before = await gw.db.dataRecord.count();
    for (const [body, message] of [
      [[{ endpoint: 'notes', data: {} }], /body\[0\]\.endpoint/],
      [
        [
          { endpoint: 'notes/items', data: {} },
          { endpoint: 'notes/Items!', data: {} },
        ],
        /body\[1\]\.endpoint/,
      ],
      [[{ endpoint: 'notes/items', data: [1] }], /body\[0\]\.data/],
      [{ endpoint: 'notes/items', data: {} }, /body/],
    ] as const) {
      const res = await as(alice)
        .post('/api/v2.6/data-batch')
        .send(body as object);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    expect(await gw.db.dataRecord.count()).toBe(before);
  });

  it("links the caller's records both ways (201 Grouping registered); others' records are refused", async () => {
    const [a, b, c] = ids(
      await as(notes)
        .post('/api/v2.6/data/notes/group')
        .send([{ n: 1 }, { n: 2 }, { n: 3 }]),
    );
    const res = await as(notes).post(`/api/v2.6/data-link?records=${a}&records=${b}&records=${c}`);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ message: 'Grouping registered' });
    expect(await gw.db.dataRecordLink.count({ where: { recordId: { in: [a, b, c] as string[] } } })).toBe(6);
    const [theirs] = ids(
      await as(diary)
        .post('/api/v2.6/data/diary/group')
        .send([{ n: 4 }]),
    );
    expect((await as(notes).post(`/api/v2.6/data-link?records=${a}&records=${theirs}`)).status).toBe(400);
    expect((await as(notes).post(`/api/v2.6/data-link?records=${a}`)).status).toBe(400);
    expect(await gw.db.dataRecordLink.count({ where: { recordId: theirs } })).toBe(0);
  });
});

describe('skipErrors and sources', () => {
  it('POST ?skipErrors=true stores the valid records and leaves out the rest', async () => {
    // A NUL anywhere in a body is refused whole at the boundary (docs/reliability.md); deeper than a
    // record may nest is a per-record error that skipErrors leaves out.
    const tooDeep = JSON.parse('{"a":'.repeat(40) + '1' + '}'.repeat(40)) as object;
    const res = await as(alice)
      .post('/api/v2.6/data/test/skip?skipErrors=true')
      .send([{ ok: 1 }, 'text', tooDeep, { ok: 2 }]);
    expect(res.status).toBe(201);
    expect((res.body as { data: unknown }[]).map((r) => r.data)).toEqual([{ ok: 1 }, { ok: 2 }]);
    expect(await gw.db.dataRecord.count({ where: { namespace: 'test', endpoint: 'skip' } })).toBe(2);
    // Without it the same body is refused whole.
    expect(
      (
        await as(alice)
          .post('/api/v2.6/data/test/skip')
          .send([{ ok: 3 }, 'text'])
      ).status,
    ).toBe(400);
    expect(await gw.db.dataRecord.count({ where: { namespace: 'test', endpoint: 'skip' } })).toBe(2);
  });

  it("GET /data/sources lists the owner's tables; apps and users get 403, other instances see their own", async () => {
    const res = await as(alice).get('/api/v2.6/data/sources');
    expect(res.status).toBe(200);
    expect(res.body.notes).toEqual(expect.arrayContaining(['items', 'one']));
    expect(res.body.test).toEqual(['skip']);
    expect((await as(notes).get('/api/v2.6/data/sources')).status).toBe(403);
    const carol = await addUser(gw.app, alice, 'carol');
    expect((await as(carol).get('/api/v2.6/data/sources')).status).toBe(403);
    expect((await as(bob, bob.address).get('/api/v2.6/data/sources')).body).toEqual({});
  });
});
