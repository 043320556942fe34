// The outbox: every change writes its events in its own statement; the numbering step numbers them
// without gaps per instance, in the order they were written.
import { randomUUID } from 'node:crypto';
import { EventRepository } from '@pds/db';
import { callerRequests } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { sweepActivity } from '../src/jobs/activity-sweep';
import { uploadFile } from './files-support';

const { gw, owners, users } = useGateway({ owners: ['alice', 'bob'], users: { carol: 'alice' } });
const { alice, bob } = owners;
const { carol } = users;

const as = (who: { token: string }, host = alice.address) => callerRequests(gw.app, who, host);

/**
 * The instance's events in number order, once the numbering step (the worker's or a stream's) has run:
 * as readers see them, each event apart, with the client address its row keeps.
 */
async function eventsOf(address: string) {
  const instance = await gw.db.instance.findUniqueOrThrow({ where: { address } });
  const events = new EventRepository(gw.db);
  await events.number(instance.id);
  const rows = await gw.db.event.findMany({ where: { instanceId: instance.id }, orderBy: { seq: 'asc' } });
  const addresses = rows.flatMap((row) => Array.from({ length: row.count }, () => row.address));
  return (await events.after(instance.id, 0, 10_000)).map((event, i) => ({ ...event, address: addresses[i] }));
}

describe('the outbox', () => {
  it('writes one event per changed record, with the actor and the client address', async () => {
    await as(alice).post('/api/v2.6/data-grants').send({ userId: carol.userId, namespace: 'fitness', access: 'write' }).expect(201);
    const before = (await eventsOf(alice.address)).length;
    const created = await as(carol)
      .post('/api/v2.6/data/fitness/steps')
      .send([{ n: 1 }, { n: 2 }])
      .expect(201);
    const ids = created.body.map((r: { recordId: string }) => r.recordId);
    await as(alice)
      .put('/api/v2.6/data')
      .send([{ recordId: ids[0], endpoint: 'fitness/steps', data: { n: 3 } }])
      .expect(201);
    await as(alice).delete(`/api/v2.6/data?records=${ids[1]}`).expect(200);

    const events = (await eventsOf(alice.address)).slice(before);
    expect(events.map((e) => [e.type, e.actorKind, e.actorId, e.object])).toEqual([
      ['record.created', 'user', carol.userId, { namespace: 'fitness', endpoint: 'steps', recordId: expect.any(String) }],
      ['record.created', 'user', carol.userId, { namespace: 'fitness', endpoint: 'steps', recordId: expect.any(String) }],
      ['record.updated', 'owner', alice.userId, { namespace: 'fitness', endpoint: 'steps', recordId: ids[0] }],
      ['record.deleted', 'owner', alice.userId, { namespace: 'fitness', endpoint: 'steps', recordId: ids[1] }],
    ]);
    expect(new Set(events.slice(0, 2).map((e) => (e.object as { recordId: string }).recordId))).toEqual(new Set(ids));
    expect(events.every((e) => typeof e.address === 'string' && e.at instanceof Date)).toBe(true);
  });

  it('numbers the events of each instance without gaps, also while writes and numberers run at once', async () => {
    const numbering = new EventRepository(gw.db);
    const listened = await Promise.all(
      [alice, bob].map(async ({ address }) => (await gw.db.instance.findUniqueOrThrow({ where: { address } })).id),
    );
    let writing = true;
    // Three numberers (a worker and two gateways' streams, say) racing each other and the writes.
    const numberers = Array.from({ length: 3 }, async () => {
      while (writing) await numbering.numberPending(listened);
    });
    await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        as(n % 2 ? alice : bob, n % 2 ? alice.address : bob.address)
          .post('/api/v2.6/data/test/race')
          .send({ n })
          .expect(201),
      ),
    );
    writing = false;
    await Promise.all(numberers);
    for (const address of [alice.address, bob.address]) {
      const seqs = (await eventsOf(address)).map((e) => e.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      const instance = await gw.db.instance.findUniqueOrThrow({ where: { address } });
      const counter = await gw.db.eventCounter.findUniqueOrThrow({ where: { instanceId: instance.id } });
      expect(Number(counter.last)).toBe(seqs.length);
    }
  });

  it("numbers a record's events in the order its changes were made", async () => {
    const instance = await gw.db.instance.findUniqueOrThrow({ where: { address: alice.address } });
    const record = (await as(alice).post('/api/v2.6/data/test/order').send({ n: 1 }).expect(201)).body;
    await as(alice)
      .put('/api/v2.6/data')
      .send([{ recordId: record.recordId, endpoint: 'test/order', data: { n: 2 } }])
      .expect(201);
    await as(alice).delete(`/api/v2.6/data?records=${record.recordId}`).expect(200);
    const unnumbered = await gw.db.event.count({ where: { instanceId: instance.id, seq: null } });
    expect(unnumbered).toBeGreaterThanOrEqual(3);
    const last = await new EventRepository(gw.db).number(instance.id);
    expect(await gw.db.event.count({ where: { instanceId: instance.id, seq: null } })).toBe(0);
    const mine = (await eventsOf(alice.address)).filter((e) => (e.object as { recordId?: string }).recordId === record.recordId);
    expect(mine.map((e) => e.type)).toEqual(['record.created', 'record.updated', 'record.deleted']);
    expect(mine[2]!.seq).toBe(last);
  });

  it("keeps a batch's events in one row, numbered one by one and read from anywhere in it, past nine (numbers, not text, in order)", async () => {
    const instance = await gw.db.instance.findUniqueOrThrow({ where: { address: bob.address } });
    const events = new EventRepository(gw.db);
    const start = await events.number(instance.id);
    const batch = Array.from({ length: 12 }, (_, n) => ({ n }));
    const saved = (await as(bob, bob.address).post('/api/v2.6/data/test/batch').send(batch).expect(201)).body as { recordId: string }[];
    const one = (await as(bob, bob.address).post('/api/v2.6/data/test/batch').send({ n: 12 }).expect(201)).body as { recordId: string };
    const last = await events.number(instance.id);
    expect(last).toBe(start + 13);
    const rows = await gw.db.event.findMany({ where: { instanceId: instance.id, seq: { gt: start } }, orderBy: { seq: 'asc' } });
    expect(rows.map((row) => [row.count, Number(row.seq)])).toEqual([
      [12, start + 12],
      [1, start + 13],
    ]);
    const ids = [...saved.map((r) => r.recordId), one.recordId];
    const after = async (seq: number) =>
      (await events.after(instance.id, seq, 100)).map((e) => [e.seq, (e.object as { recordId: string }).recordId]);
    expect(await after(start)).toEqual(ids.map((id, i) => [start + 1 + i, id]));
    // A reader that stopped in the middle of the batch gets the rest of it, then what follows.
    expect(await after(start + 5)).toEqual(ids.slice(5).map((id, i) => [start + 6 + i, id]));
    expect(await after(start + 12)).toEqual([[start + 13, one.recordId]]);
  });

  it('writes no event for a change refused or changing nothing', async () => {
    const before = await eventsOf(alice.address);
    await as(alice)
      .post('/api/v2.6/data/test/bad')
      .send([{ ok: 1 }, 'text'])
      .expect(400);
    const missing = await as(alice).delete(`/api/v2.6/data?records=${randomUUID()}`);
    expect(missing.status).toBeGreaterThanOrEqual(400);
    expect(await eventsOf(alice.address)).toEqual(before);
  });

  it('records file changes: uploaded, completed, shared, made public, deleted', async () => {
    const before = (await eventsOf(alice.address)).length;
    const file = await uploadFile(gw, alice, { name: 'a.txt', source: 'test' });
    await as(alice).get(`/api/v2.6/files/allowAccess/${file.fileId}/${carol.userId}?content=true`).expect(200);
    await as(alice).get(`/api/v2.6/files/allowAccessPublic/${file.fileId}`).expect(200);
    await as(alice).delete(`/api/v2.6/files/file/${file.fileId}`).expect(200);
    const events = (await eventsOf(alice.address)).slice(before);
    expect(events.map((e) => e.type)).toEqual(['file.uploaded', 'file.completed', 'file.shared', 'file.public', 'file.deleted']);
    expect(events.every((e) => (e.object as { fileId: string }).fileId === file.fileId)).toBe(true);
  });
});

describe('retention', () => {
  it('sweeps events and reads older than ACTIVITY_RETENTION_DAYS, and nothing newer', async () => {
    const instance = await gw.db.instance.findUniqueOrThrow({ where: { address: bob.address } });
    const events = new EventRepository(gw.db);
    const old = new Date(Date.now() - 91 * 24 * 3600 * 1000);
    await events.addReads([
      {
        instanceId: instance.id,
        type: 'file.content',
        actorKind: 'owner',
        actorId: null,
        object: { fileId: 'old' },
        address: null,
        at: old,
        times: 1,
      },
      {
        instanceId: instance.id,
        type: 'file.content',
        actorKind: 'owner',
        actorId: null,
        object: { fileId: 'new' },
        address: null,
        at: new Date(),
        times: 1,
      },
    ]);
    await eventsOf(bob.address);
    const first = await gw.db.event.findFirstOrThrow({ where: { instanceId: instance.id }, orderBy: { seq: 'asc' } });
    await gw.db.event.update({ where: { instanceId_id: { instanceId: instance.id, id: first.id } }, data: { at: old } });
    const before = (await eventsOf(bob.address)).length;

    expect(await sweepActivity(events, 90, new Date())).toBeGreaterThanOrEqual(1);
    expect((await eventsOf(bob.address)).map((e) => e.seq)).not.toContain(Number(first.seq));
    expect(await eventsOf(bob.address)).toHaveLength(before - 1);
    const reads = await gw.db.readActivity.findMany({ where: { instanceId: instance.id } });
    expect(reads.map((r) => r.object)).toEqual([{ fileId: 'new' }]);
  });
});
