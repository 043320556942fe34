// POST /api/v2.6/files/bulk: one action on a selection, with the owner rules of the single calls, as
// the owner and the accounts it shares with see the outcome.
import { objectKey, trashKey } from '@pds/storage';
import { addUser, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { call, fileTables, getBytes, startFilesGateway, STORES, uploadFile, type As } from './files-support';

describe.each(STORES)('on the %s store', (store) => {
  let gw: TestGateway;
  let alice: SignedUp;
  let owner: As;
  let bob: As;
  let bobId: string;
  const ids: string[] = [];

  beforeAll(async () => {
    gw = await startFilesGateway(store);
    alice = await signUp(gw.app, 'alice');
    owner = { address: alice.address, token: alice.token };
    const added = await addUser(gw.app, alice, 'bob');
    bob = { address: alice.address, token: added.token };
    bobId = added.userId;
    for (let i = 1; i <= 5; i++)
      ids.push((await uploadFile(gw, owner, { name: `file${i}.txt`, source: 'console' }, Buffer.from(`file ${i}`))).fileId);
  });
  afterAll(() => gw.close());

  const bulk = (as: As, body: object) => call(gw, 'post', '/bulk', as, body);
  const bobSees = async () => ((await call(gw, 'get', '/listing?sort=name', bob)).body.files as { fileId: string }[]).map((f) => f.fileId);

  it('shares exactly the selected files, and unshares them again', async () => {
    const selected = [ids[0]!, ids[2]!, ids[4]!];
    const shared = await bulk(owner, { fileIds: selected, action: 'share', userId: bobId, content: true });
    expect(shared.status).toBe(200);
    expect(shared.body.failed).toEqual([]);
    expect(shared.body.updated.map((f: { fileId: string }) => f.fileId)).toEqual(selected);
    for (const file of shared.body.updated) expect(file.permissions).toContainEqual({ userId: bobId, contentReadable: true });
    expect(await bobSees()).toEqual(selected);
    const readable = await call(gw, 'get', `/file/${ids[2]}`, bob);
    expect((await getBytes(gw, readable.body.contentUrl)).body.toString()).toBe('file 3');

    const unshared = await bulk(owner, { fileIds: [ids[0]!, ids[2]!], action: 'unshare', userId: bobId });
    expect(unshared.status).toBe(200);
    expect(await bobSees()).toEqual([ids[4]]);
  });

  it('makes files public and private again', async () => {
    const made = await bulk(owner, { fileIds: [ids[0]!, ids[1]!], action: 'public' });
    expect(made.body.updated.map((f: { contentPublic: boolean }) => f.contentPublic)).toEqual([true, true]);
    expect((await call(gw, 'get', `/content/${ids[1]}`, { address: alice.address })).status).toBe(303);
    await bulk(owner, { fileIds: [ids[0]!, ids[1]!], action: 'private' });
    expect((await call(gw, 'get', `/content/${ids[1]}`, { address: alice.address })).status).toBe(404);
  });

  it('lists the files that do not exist apart, and does the rest', async () => {
    const res = await bulk(owner, { fileIds: [ids[3]!, 'nothing.txt'], action: 'public' });
    expect(res.status).toBe(200);
    expect(res.body.updated.map((f: { fileId: string }) => f.fileId)).toEqual([ids[3]]);
    expect(res.body.failed).toEqual([{ fileId: 'nothing.txt', error: 'Not Found', message: 'File nothing.txt not found' }]);
  });

  it('moves the selected files to the trash, and deleting again is no error', async () => {
    const { fileId: a } = await uploadFile(gw, owner, { name: 'gone-a.txt', source: 'console' });
    const { fileId: b } = await uploadFile(gw, owner, { name: 'gone-b.txt', source: 'console' });
    const res = await bulk(owner, { fileIds: [a, b, 'nothing.txt'], action: 'delete' });
    expect(res.status).toBe(200);
    expect(res.body.updated.map((f: { fileId: string; status: { status: string } }) => [f.fileId, f.status.status])).toEqual([
      [a, 'Deleted'],
      [b, 'Deleted'],
    ]);
    expect(res.body.failed.map((f: { fileId: string }) => f.fileId)).toEqual(['nothing.txt']);
    const trashed = await call(gw, 'get', '/trash', owner);
    expect(trashed.body.map((f: { fileId: string }) => f.fileId).sort()).toEqual([a, b].sort());
    for (const fileId of [a, b]) expect(await gw.blobStore.stat(trashKey(objectKey(alice.address, fileId)))).toBe(5);
    expect((await bulk(owner, { fileIds: [a], action: 'delete' })).body.updated).toHaveLength(1);
  });

  it('is the owner’s alone, refuses an unknown user and bad input, and then changes nothing', async () => {
    const before = await fileTables(gw);
    const asBob = await bulk(bob, { fileIds: [ids[4]!], action: 'delete' });
    expect(asBob.status).toBe(403);
    expect(asBob.body.error).toBe('Forbidden');
    const unknown = await bulk(owner, { fileIds: [ids[1]!], action: 'share', userId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('User 00000000-0000-4000-8000-000000000000 not found');
    for (const [body, field] of [
      [{ fileIds: [ids[1]], action: 'share' }, 'userId'],
      [{ fileIds: [ids[1]], action: 'unshare' }, 'userId'],
      [{ fileIds: [ids[1]], action: 'rename' }, 'action'],
      [{ fileIds: [], action: 'delete' }, 'fileIds'],
      [{ fileIds: [ids[1]], action: 'share', userId: bobId, content: 'yes' }, 'content'],
    ] as const) {
      const res = await bulk(owner, body);
      expect({ field, status: res.status }).toEqual({ field, status: 400 });
      expect(res.body.message).toContain(field);
    }
    expect((await bulk({ address: alice.address }, { fileIds: [ids[1]!], action: 'delete' })).status).toBe(401);
    expect(await fileTables(gw)).toEqual(before);
  });
});
