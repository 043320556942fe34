// hatFiles() of the published client, unchanged, against the gateway on either real store: every method,
// what it returns and what the database holds afterwards.
import request from 'supertest';
import { addUser } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { getBytes, STORES } from './files-support';
import { failure, hatClient, serveForHatJs } from './hat-js-support';

describe.each(STORES)('hat-js hatFiles() against the gateway on the %s store', (store) => {
  const { gw, owners } = useGateway({ store, owners: ['alice'] });
  const { alice } = owners;
  let served: { close(): Promise<void> };
  beforeAll(async () => {
    served = await serveForHatJs(gw);
  });
  afterAll(() => served.close());

  const row = (fileId: string) => gw.db.file.findFirstOrThrow({ where: { fileId, instance: { address: alice.address } } });

  it('uploads, completes, publishes, searches and deletes a file', async () => {
    const files = hatClient(alice.token).files();
    const bytes = Buffer.from('bytes from hat-js');

    const completed = await files.uploadFile({ name: 'hello.txt', source: 'hatjs', tags: ['t'] }, bytes, 'text/plain');
    expect(completed.status).toBe(200);
    const file = completed.parsedBody as { fileId: string; status: unknown; contentUrl?: string };
    expect(file.fileId).toBe('hatjshello.txt');
    expect(file.status).toEqual({ status: 'Completed', size: bytes.length });
    expect(await row(file.fileId)).toEqual(expect.objectContaining({ status: 'Completed', size: BigInt(bytes.length), tags: ['t'] }));

    const made = await files.markFileAsPublic(file.fileId);
    expect((made.parsedBody as { contentPublic: boolean }).contentPublic).toBe(true);
    expect((await row(file.fileId)).contentPublic).toBe(true);
    // The content link hat-js hands out works without a token.
    const link = new URL(files.generateFileContentUrl(file.fileId));
    expect(link.pathname).toBe(`/api/v2.6/files/content/${file.fileId}`);
    const redirect = await request(gw.app).get(link.pathname).set('Host', link.host);
    expect(redirect.status).toBe(303);
    expect((await getBytes(gw, redirect.headers.location as string)).body.equals(bytes)).toBe(true);

    const found = await files.searchFiles({ name: '', source: 'hatjs' });
    expect((found.parsedBody as { fileId: string }[]).map((f) => f.fileId)).toEqual([file.fileId]);

    const priv = await files.markFileAsPrivate(file.fileId);
    expect((priv.parsedBody as { contentPublic: boolean }).contentPublic).toBe(false);
    expect((await row(file.fileId)).contentPublic).toBe(false);

    const removed = await files.deleteFile(file.fileId);
    expect((removed.parsedBody as { status: unknown }).status).toEqual({ status: 'Deleted' });
    expect((await row(file.fileId)).status).toBe('Deleted');
  });

  it('updateFileParameters replaces name, tags, title and description under the same fileId', async () => {
    const files = hatClient(alice.token).files();
    const uploaded = await files.uploadFile(
      { name: 'photo.png', source: 'hatjs', tags: ['old'], title: 'Old title', description: 'Old words' },
      Buffer.from('png'),
      'image/png',
    );
    const { fileId, lastUpdated } = uploaded.parsedBody as { fileId: string; lastUpdated: unknown };
    gw.clock.advance(5);

    const updated = await files.updateFileParameters(fileId, {
      name: 'renamed.png',
      source: 'hatjs',
      tags: ['new', 'two'],
      title: 'New title',
    });
    expect(updated.status).toBe(200);
    expect(updated.parsedBody).toEqual(expect.objectContaining({ fileId, name: 'renamed.png', tags: ['new', 'two'], title: 'New title' }));
    expect((updated.parsedBody as { description?: string }).description).toBeUndefined();
    expect((updated.parsedBody as { lastUpdated: unknown }).lastUpdated).not.toEqual(lastUpdated);
    expect(await row(fileId)).toEqual(
      expect.objectContaining({ name: 'renamed.png', tags: ['new', 'two'], title: 'New title', description: null, status: 'Completed' }),
    );
    // Search finds it by its new words.
    const found = await files.searchFiles({ name: '', source: '', title: 'new' });
    expect((found.parsedBody as { fileId: string }[]).map((f) => f.fileId)).toContain(fileId);
  });

  it('updateFileParameters: 404 for an unknown file, 403 for an account that only sees it, 400 without a name; nothing changes', async () => {
    const files = hatClient(alice.token).files();
    const uploaded = await files.uploadFile({ name: 'keep.txt', source: 'hatjs' }, Buffer.from('k'), 'text/plain');
    const { fileId } = uploaded.parsedBody as { fileId: string };
    const before = await row(fileId);

    expect((await failure(files.updateFileParameters('nosuchfile', { name: 'x', source: 'hatjs' }))).status).toBe(404);
    expect((await failure(files.updateFileParameters(fileId, { name: '', source: 'hatjs' }))).status).toBe(400);
    const carol = await addUser(gw.app, alice, 'carol');
    await request(gw.app)
      .get(`/api/v2.6/files/allowAccess/${fileId}/${carol.userId}`)
      .set('Host', alice.address)
      .set('X-Auth-Token', alice.token)
      .expect(200);
    expect(
      (await failure(hatClient(carol.token).files().updateFileParameters(fileId, { name: 'taken.txt', source: 'hatjs' }))).status,
    ).toBe(403);
    expect(await row(fileId)).toEqual(before);
  });

  it("the uploader may update its own file's metadata", async () => {
    const dave = await addUser(gw.app, alice, 'dave');
    const files = hatClient(dave.token).files();
    const uploaded = await files.uploadFile({ name: 'mine.txt', source: 'dave' }, Buffer.from('d'), 'text/plain');
    const { fileId } = uploaded.parsedBody as { fileId: string };
    const updated = await files.updateFileParameters(fileId, { name: 'still-mine.txt', source: 'dave', tags: ['d'] });
    expect(updated.parsedBody).toEqual(expect.objectContaining({ fileId, name: 'still-mine.txt', tags: ['d'] }));
    expect((await row(fileId)).name).toBe('still-mine.txt');
  });
});
