// hatData() of the published client, unchanged: every method as an app would call it with its token,
// what the client returns and what the database holds afterwards.
import { useGateway } from '../../../test/support/use-gateway';
import { appRecord, installApp } from './apps-fixtures';
import { failure, hatClient, serveForHatJs } from './hat-js-support';

interface Note {
  title: string;
  rank: number;
}
type Records = { endpoint: string; recordId: string; data: Note }[];

const { gw, dex, owners } = useGateway({ dex: true, owners: ['alice'] });
const { alice } = owners;
let served: { close(): Promise<void> };
let app: { token: string; userId: string };

beforeAll(async () => {
  served = await serveForHatJs(gw);
  app = await installApp(gw, dex, alice, appRecord('notes'));
});
afterAll(() => served.close());

const rows = (endpoint: string) => gw.db.dataRecord.findMany({ where: { namespace: 'notes', endpoint }, orderBy: { seq: 'asc' } });

describe('hat-js hatData()', () => {
  it('create stores one record or an array (201) and returns them as HatRecords', async () => {
    const data = hatClient(app.token).hatData();
    const one = await data.create('notes', 'items', { title: 'first', rank: 2 });
    expect(one.status).toBe(201);
    expect(one.parsedBody).toEqual({ endpoint: 'notes/items', recordId: expect.any(String), data: { title: 'first', rank: 2 } });
    const many = await data.create('notes', 'items', [
      { title: 'second', rank: 1 },
      { title: 'third', rank: 3 },
    ]);
    expect((many.parsedBody as unknown as Records).map((r) => r.data.title)).toEqual(['second', 'third']);
    const stored = await rows('items');
    expect(stored.map((r) => (r.data as unknown as Note).title)).toEqual(['first', 'second', 'third']);
    expect(stored.every((r) => r.userId === app.userId)).toBe(true);
  });

  it('getAllDefault returns every record in insertion order; getAll passes orderBy, ordering, skip and take', async () => {
    const data = hatClient(app.token).hatData();
    const all = await data.getAllDefault<Note>('notes', 'items');
    expect((all.parsedBody as Records).map((r) => r.data.title)).toEqual(['first', 'second', 'third']);
    const ranked = await data.getAll<Note>('notes', 'items', { orderBy: 'rank', ordering: 'descending', take: '2' });
    expect((ranked.parsedBody as Records).map((r) => r.data.rank)).toEqual([3, 2]);
    const skipped = await data.getAll<Note>('notes', 'items', { orderBy: 'rank', skip: '1' });
    expect((skipped.parsedBody as Records).map((r) => r.data.rank)).toEqual([2, 3]);
  });

  it('update replaces the data of the records it names (all or nothing)', async () => {
    const data = hatClient(app.token).hatData();
    const [first] = (await data.getAllDefault<Note>('notes', 'items')).parsedBody as Records;
    const changed = { ...first!, data: { title: 'first, edited', rank: 20 } };
    const res = await data.update([changed]);
    expect(res.status).toBe(201);
    expect(res.parsedBody).toEqual([changed]);
    expect((await gw.db.dataRecord.findFirstOrThrow({ where: { recordId: first!.recordId } })).data).toEqual({
      title: 'first, edited',
      rank: 20,
    });

    const unknown = { endpoint: 'notes/items', recordId: '00000000-0000-4000-8000-000000000000', data: { title: 'x', rank: 0 } };
    expect((await failure(data.update([changed, unknown]))).status).toBe(400);
    expect((await gw.db.dataRecord.findFirstOrThrow({ where: { recordId: first!.recordId } })).data).toEqual({
      title: 'first, edited',
      rank: 20,
    });
  });

  it('delete removes the records it names (hat-js sends them comma-separated) and answers All records deleted', async () => {
    const data = hatClient(app.token).hatData();
    const records = (await data.getAllDefault<Note>('notes', 'items')).parsedBody as Records;
    const res = await data.delete(records.slice(0, 2).map((r) => r.recordId));
    expect(res.status).toBe(200);
    expect(res.parsedBody).toEqual(expect.objectContaining({ message: 'All records deleted' }));
    expect((await rows('items')).map((r) => r.recordId)).toEqual([records[2]?.recordId]);
    // An empty list never reaches the server: the client refuses it itself.
    await expect(data.delete([])).rejects.toEqual(expect.objectContaining({ message: expect.any(String) }));
  });

  it("an app cannot write outside its namespace nor delete the owner's records (403 / 400), and nothing changes", async () => {
    const owner = hatClient(alice.token).hatData();
    const mine = (await owner.create('diary', 'days', { title: 'private', rank: 0 })).parsedBody as unknown as Records[number];
    const data = hatClient(app.token).hatData();
    expect((await failure(data.create('diary', 'days', { title: 'intrusion', rank: 0 }))).status).toBe(403);
    expect((await failure(data.delete([mine.recordId]))).status).toBe(400);
    expect((await failure(data.getAllDefault('diary', 'days'))).status).toBe(403);
    expect(await gw.db.dataRecord.findMany({ where: { namespace: 'diary' }, select: { data: true } })).toEqual([
      { data: { title: 'private', rank: 0 } },
    ]);
  });
});
