// DataService called directly, on real PostgreSQL: (tenant, caller, input) as the routes call it, with
// the tenant and callers of real sign-ups and a real app. What it answers is checked against the rows
// the repositories then hold: who wrote each record, all or nothing, and one instance's records only.
import { DataChangeRepository, DataGrantRepository, DataRecordRepository } from '@pds/db';
import { useGateway } from '../../../test/support/use-gateway';
import type { Caller } from '../src/context';
import { DataAccessPolicy } from '../src/data/access';
import { DataService, type RecordView } from '../src/data/service';
import type { ResolvedInstance } from '../src/instances/registry';
import { appRecord, installApp } from './apps-fixtures';
import { callerWith, tenantAt } from './callers';

const { gw, dex, owners, users } = useGateway({ dex: true, owners: ['alice', 'zed'], users: { carol: 'alice' } });
let data: DataService;
let here: ResolvedInstance;
let there: ResolvedInstance;
const as = {} as Record<'alice' | 'carol' | 'notes' | 'diary' | 'zed', Caller>;

beforeAll(async () => {
  const grants = new DataGrantRepository(gw.db);
  data = new DataService(new DataRecordRepository(gw.db), new DataChangeRepository(gw.db), new DataAccessPolicy(grants));
  here = await tenantAt(gw, owners.alice.address);
  there = await tenantAt(gw, owners.zed.address);
  as.alice = await callerWith(gw, here, owners.alice);
  as.carol = await callerWith(gw, here, users.carol);
  as.notes = await callerWith(gw, here, await installApp(gw, dex, owners.alice, appRecord('notes')));
  as.diary = await callerWith(gw, here, await installApp(gw, dex, owners.alice, appRecord('diary')));
  as.zed = await callerWith(gw, there, owners.zed);
  // Carol may read the notes, not write them.
  await grants.grant(here.instance.id, { userId: as.carol.user.id, namespace: 'notes', endpoint: '*', access: 'read' });
});

const table = (path: string) => {
  const [namespace, endpoint] = path.split(/\/(.*)/) as [string, string];
  return { namespace, endpoint };
};
const everything = { descending: false, skip: 0, take: 1000 };
/** A table's records as the service lists them (a JSON text, its data as stored), read back; its count checked against the list. */
const list = async (path: string, caller = as.alice, tenant = here): Promise<RecordView[]> => {
  const listed = await data.list(tenant, caller, { table: table(path), query: everything });
  const records = JSON.parse(listed.json) as RecordView[];
  expect(listed.count).toBe(records.length);
  return records;
};
/** Stores records; the answer's records as a client reads them. */
const create = async (path: string, body: unknown, caller = as.alice) => {
  const { saved, single } = await data.create(here, caller, { table: table(path), body, skipErrors: false });
  return { single, saved: saved.map((text) => JSON.parse(text) as RecordView) };
};
/** Who wrote each record, as stored. */
const writers = async (recordIds: string[]) =>
  (await new DataChangeRepository(gw.db).find(here.instance.id, recordIds)).map((r) => [r.recordId, r.userId]);

/** The status a call was refused with, and its message. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await call;
  } catch (error) {
    const { status, message } = error as { status?: number; message: string };
    if (status !== undefined) return { status, message };
    throw error;
  }
  throw new Error('the call succeeded');
}

describe('create and list', () => {
  it('stores one record or a list, in order, each recorded as the caller’s', async () => {
    const one = await create('notes/items', { n: 1 }, as.notes);
    const many = await create('notes/items', [{ n: 2 }, { n: 3 }], as.notes);
    expect(one).toEqual({ single: true, saved: [{ endpoint: 'notes/items', recordId: expect.any(String), data: { n: 1 } }] });
    expect(many.single).toBe(false);
    expect(many.saved.map((r) => r.data)).toEqual([{ n: 2 }, { n: 3 }]);
    const listed = await list('notes/items', as.carol);
    expect(listed.map((r) => r.data)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    const ids = listed.map((r) => r.recordId);
    expect(await writers(ids)).toEqual(ids.map((id) => [id, as.notes.user.id]));
  });

  it('asks for write access before judging the body: 403 for a reader, 400 for a writer with a bad body, nothing stored', async () => {
    expect((await refusal(create('notes/refused', [], as.carol))).status).toBe(403);
    expect(await refusal(create('notes/refused', [], as.notes))).toEqual({
      status: 400,
      message: 'body: must be a JSON object or a non-empty array of objects',
    });
    expect(await refusal(create('notes/refused', [{ ok: 1 }, 'text'], as.notes))).toMatchObject({ status: 400 });
    expect(await list('notes/refused')).toEqual([]);
  });

  it('keeps an app to its namespace, and each instance to its own records', async () => {
    expect(await refusal(create('diary/notes', { n: 1 }, as.notes))).toEqual({
      status: 403,
      message: 'No write access to data diary/notes',
    });
    expect(await list('diary/notes')).toEqual([]);
    expect(await list('notes/items', as.zed, there)).toEqual([]);
  });
});

describe('records by id', () => {
  it('gives a record to its writer and the owner; to anyone else, and for a missing id, the same 400', async () => {
    const [mine] = (await create('diary/days', { d: 'mine' }, as.diary)).saved;
    const recordId = mine?.recordId as string;
    expect(await data.get(here, as.diary, { recordId })).toEqual({ endpoint: 'diary/days', recordId, data: { d: 'mine' }, links: [] });
    expect((await data.get(here, as.alice, { recordId })).data).toEqual({ d: 'mine' });
    const missing = { status: 400, message: 'Could not find unique record: No single record found for provided ID' };
    expect(await refusal(data.get(here, as.notes, { recordId }))).toEqual(missing);
    expect(await refusal(data.get(there, as.zed, { recordId }))).toEqual(missing);
    expect(await refusal(data.get(here, as.alice, { recordId: '00000000-0000-4000-8000-000000000000' }))).toEqual(missing);
  });

  it('updates all the records named or none: one record of another account changes nothing', async () => {
    const [mine] = (await create('diary/days', { v: 1 }, as.diary)).saved;
    const [theirs] = (await create('notes/items', { v: 2 }, as.notes)).saved;
    const body = [
      { recordId: mine?.recordId, data: { v: 'changed' } },
      { recordId: theirs?.recordId, data: { v: 'changed' } },
    ];
    expect(await refusal(data.update(here, as.diary, { body }))).toEqual({
      status: 400,
      message: 'Could not update records: Records missing for updating',
    });
    expect((await data.get(here, as.alice, { recordId: mine?.recordId as string })).data).toEqual({ v: 1 });
    const [updated] = await data.update(here, as.diary, { body: [body[0]] });
    expect(updated?.data).toEqual({ v: 'changed' });
  });

  it('removes only the caller’s records, all or none', async () => {
    const saved = (await create('diary/bin', [{ r: 1 }, { r: 2 }], as.diary)).saved.map((r) => r.recordId);
    const [alices] = (await create('diary/bin', { r: 3 })).saved;
    expect((await refusal(data.remove(here, as.diary, { recordIds: [...saved, alices?.recordId as string] }))).status).toBe(400);
    expect(await list('diary/bin')).toHaveLength(3);
    expect(await data.remove(here, as.diary, { recordIds: saved })).toBe(2);
    expect((await list('diary/bin')).map((r) => r.data)).toEqual([{ r: 3 }]);
  });
});

describe('whole tables', () => {
  it('deletes every record of a table for a writer, whoever wrote them, and refuses a reader', async () => {
    await create('notes/trash', { by: 'app' }, as.notes);
    await create('notes/trash', { by: 'owner' });
    expect((await refusal(data.deleteAll(here, as.carol, { table: table('notes/trash') }))).status).toBe(403);
    expect(await list('notes/trash')).toHaveLength(2);
    expect(await data.deleteAll(here, as.notes, { table: table('notes/trash') })).toBe(2);
    expect(await list('notes/trash')).toEqual([]);
  });

  it('stores a batch across tables only when the caller writes every one of them', async () => {
    const body = [{ endpoint: 'notes/batched', data: { b: 1 }, links: [{ endpoint: 'diary/batched', data: { b: 2 } }] }];
    expect(await refusal(data.batch(here, as.notes, { body }))).toEqual({ status: 403, message: 'No write access to data diary/batched' });
    expect([...(await list('notes/batched')), ...(await list('diary/batched'))]).toEqual([]);
    const batched = await data.batch(here, as.alice, { body });
    const [saved] = JSON.parse(batched.json) as RecordView[];
    expect(batched.count).toBe(1);
    expect(saved).toMatchObject({ endpoint: 'notes/batched', data: { b: 1 }, links: [{ endpoint: 'diary/batched', data: { b: 2 } }] });
  });

  it('lists the tables holding records to the owner only', async () => {
    const sources = await data.sources(here, as.alice);
    expect(sources.notes).toEqual(expect.arrayContaining(['items', 'batched']));
    expect(sources.diary).toEqual(expect.arrayContaining(['days', 'bin']));
    expect((await refusal(data.sources(here, as.notes))).status).toBe(403);
    expect(await data.sources(there, as.zed)).toEqual({});
  });
});
