// PUT /api/v2.6/files/file/:fileId: the owner edits title, description and tags.
import { addUser, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { call, startFilesGateway, uploadFile, type As } from './files-support';

let gw: TestGateway;
let alice: SignedUp;
let bob: SignedUp;
let carol: As;

beforeAll(async () => {
  gw = await startFilesGateway('local');
  alice = await signUp(gw.app, 'alice');
  bob = await signUp(gw.app, 'bob');
  carol = { address: alice.address, token: (await addUser(gw.app, alice, 'carol')).token };
});
afterAll(() => gw.close());

const owner = () => ({ address: alice.address, token: alice.token });

async function storedFile(fileId: string) {
  const instance = await gw.db.instance.findUniqueOrThrow({ where: { address: alice.address } });
  return gw.db.file.findUniqueOrThrow({ where: { instanceId_fileId: { instanceId: instance.id, fileId } } });
}

describe('editing a file’s details', () => {
  it('replaces the fields given, keeps the others, and moves lastUpdated', async () => {
    const file = await uploadFile(gw, owner(), {
      name: 'report.pdf',
      source: 'test',
      title: 'Old',
      description: 'First draft',
      tags: ['a'],
    });
    gw.clock.advance(5);
    const res = await call(gw, 'put', `/file/${file.fileId}`, owner(), { title: 'Annual report', tags: ['work', '2026'] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      fileId: file.fileId,
      name: 'report.pdf',
      title: 'Annual report',
      description: 'First draft',
      tags: ['work', '2026'],
    });
    expect(Date.parse(res.body.lastUpdated)).toBeGreaterThan(Date.parse(file.lastUpdated as string));
    expect(res.body.permissions).toEqual([{ userId: alice.userId, contentReadable: true }]);
    const row = await storedFile(file.fileId);
    expect(row).toMatchObject({ title: 'Annual report', description: 'First draft', tags: ['work', '2026'] });
  });

  it('clears a title or description sent empty (omitted from the record)', async () => {
    const file = await uploadFile(gw, owner(), { name: 'clear.txt', source: 'test', title: 'T', description: 'D' });
    const res = await call(gw, 'put', `/file/${file.fileId}`, owner(), { title: '', description: '' });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('title');
    expect(res.body).not.toHaveProperty('description');
    expect(await storedFile(file.fileId)).toMatchObject({ title: null, description: null });
  });

  it('is for the owner only: a user holding a permission gets 403, one without gets 404, nothing changes', async () => {
    const file = await uploadFile(gw, owner(), { name: 'shared.txt', source: 'test', title: 'Kept' });
    const carolId = (await gw.db.user.findFirstOrThrow({ where: { username: 'carol' } })).id;
    expect((await call(gw, 'get', `/allowAccess/${file.fileId}/${carolId}?content=true`, owner())).status).toBe(200);
    const shared = await call(gw, 'put', `/file/${file.fileId}`, carol, { title: 'Hijacked' });
    expect(shared.status).toBe(403);
    const other = await uploadFile(gw, owner(), { name: 'private.txt', source: 'test', title: 'Kept' });
    const hidden = await call(gw, 'put', `/file/${other.fileId}`, carol, { title: 'Hijacked' });
    expect(hidden.status).toBe(404);
    expect((await storedFile(file.fileId)).title).toBe('Kept');
    expect((await storedFile(other.fileId)).title).toBe('Kept');
  });

  it('answers 404 for an unknown file, and 401 to a token of another instance', async () => {
    const missing = await call(gw, 'put', '/file/nothing.txt', owner(), { title: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'Not Found', message: expect.stringContaining('nothing.txt') });
    const file = await uploadFile(gw, owner(), { name: 'alices.txt', source: 'test' });
    const cross = await call(gw, 'put', `/file/${file.fileId}`, { address: alice.address, token: bob.token }, { title: 'x' });
    expect(cross.status).toBe(401);
  });

  it.each([
    ['a title over 1,024 characters', { title: 'x'.repeat(1025) }, /title/],
    ['more than 64 tags', { tags: Array.from({ length: 65 }, (_, n) => `t${n}`) }, /tags/],
    ['tags that are not a list', { tags: 'work' }, /tags/],
  ])('answers 400 for %s and changes nothing', async (_what, body, message) => {
    const file = await uploadFile(gw, owner(), { name: `bad${Math.random()}.txt`, source: 'test', title: 'Kept', tags: ['kept'] });
    const res = await call(gw, 'put', `/file/${file.fileId}`, owner(), body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Bad Request', message: expect.stringMatching(message) });
    expect(await storedFile(file.fileId)).toMatchObject({ title: 'Kept', tags: ['kept'] });
  });
});
