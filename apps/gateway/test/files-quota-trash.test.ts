// Quotas, usage and the trash (issue 22) on both stores: completions past the quota answer 413 and keep
// no bytes, however many run at once; usage stays equal to a recount through deletes, restores and
// purges; a trashed file is Deleted to every reader, its bytes out of reach of every address issued
// before (issue 31), until it is restored (same bytes, same permissions) or purged, by the owner or by
// the timed job.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { FileRepository, SYSTEM, UsageRepository } from '@pds/db';
import { objectKey, thumbnailKey, trashKey } from '@pds/storage';
import { useGateway } from '../../../test/support/use-gateway';
import { trashPurgeProcessor } from '../src/jobs/trash-purge';
import { call, getBytes, putBytes, STORES, uploadFile } from './files-support';

const KiB = 1024;
const MiB = 1024 * KiB;

describe.each(STORES)('quotas, usage and trash on the %s store', (store) => {
  const { gw, owners, users } = useGateway({ store, env: { QUOTA_BYTES: String(MiB) }, owners: ['alice', 'zed'], users: { bob: 'alice' } });
  const { alice, zed } = owners;
  const { bob } = users;
  const owner = () => ({ address: alice.address, token: alice.token });
  const asBob = () => ({ address: alice.address, token: bob.token });

  const instanceId = async (address: string) => (await gw.db.instance.findUniqueOrThrow({ where: { address } })).id;
  const usage = async (address: string) => new UsageRepository(gw.db).find(await instanceId(address));
  const noDrift = async () => expect((await new UsageRepository(gw.db).verify()).drift).toEqual([]);
  const stored = (address: string, fileId: string) => gw.blobStore.stat(objectKey(address, fileId));
  const inTrash = (address: string, fileId: string) => gw.blobStore.stat(trashKey(objectKey(address, fileId)));

  /** Empties alice's files: every file trashed, the trash emptied. */
  async function clear() {
    const { body } = await call(gw, 'get', '/listing?take=200', owner());
    for (const file of body.files as { fileId: string }[]) await call(gw, 'delete', `/file/${file.fileId}`, owner()).expect(200);
    await call(gw, 'delete', '/trash', owner()).expect(200);
  }

  afterEach(clear);

  it('lets exactly three of ten concurrent 300 KiB uploads into a 1 MiB quota complete; the others answer 413 and keep no bytes', async () => {
    const started = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const res = await call(gw, 'post', '/upload', owner(), { name: `part${i}.bin`, source: 'quota' }).expect(200);
        expect(await putBytes(gw, res.body.contentUrl, Buffer.alloc(300 * KiB, i))).toBe(200);
        return res.body.fileId as string;
      }),
    );
    const completed = await Promise.all(started.map((fileId) => call(gw, 'put', `/file/${fileId}/complete`, owner())));
    const statuses = completed.map((res) => res.status).sort();
    expect(statuses).toEqual([200, 200, 200, 413, 413, 413, 413, 413, 413, 413]);
    for (const [i, res] of completed.entries()) {
      if (res.status === 200) {
        expect(await stored(alice.address, started[i] as string)).toBe(300 * KiB);
        continue;
      }
      expect(res.body).toEqual({ error: 'Payload Too Large', message: expect.stringMatching(/quota/) });
      expect(await stored(alice.address, started[i] as string)).toBeNull();
    }
    expect(await usage(alice.address)).toEqual({ files: 3, fileBytes: 900 * KiB, records: 0, recordBytes: 0 });
    // Other instances have their own quota.
    await uploadFile(gw, { address: zed.address, token: zed.token }, { name: 'z.bin', source: 'quota' }, Buffer.alloc(300 * KiB));
    expect((await usage(zed.address)).fileBytes).toBe(300 * KiB);
    await noDrift();
  });

  it('counts trashed files until they are purged, and an operator quota replaces the cluster one', async () => {
    const a = await uploadFile(gw, owner(), { name: 'a.bin', source: 'usage' }, Buffer.alloc(400 * KiB, 1));
    const b = await uploadFile(gw, owner(), { name: 'b.bin', source: 'usage' }, Buffer.alloc(400 * KiB, 2));
    await call(gw, 'delete', `/file/${a.fileId}`, owner()).expect(200);
    // Still counted: a third 400 KiB does not fit while a waits in the trash.
    const third = await call(gw, 'post', '/upload', owner(), { name: 'c.bin', source: 'usage' }).expect(200);
    await putBytes(gw, third.body.contentUrl, Buffer.alloc(400 * KiB, 3));
    await call(gw, 'put', `/file/${third.body.fileId}/complete`, owner()).expect(413);
    expect(await usage(alice.address)).toMatchObject({ files: 2, fileBytes: 800 * KiB });
    await call(gw, 'delete', `/trash/${a.fileId}`, owner()).expect(200);
    expect(await usage(alice.address)).toMatchObject({ files: 1, fileBytes: 400 * KiB });
    // The client may upload again within the deadline: now it fits.
    await putBytes(gw, third.body.contentUrl, Buffer.alloc(400 * KiB, 3));
    await call(gw, 'put', `/file/${third.body.fileId}/complete`, owner()).expect(200);
    expect(await usage(alice.address)).toMatchObject({ files: 2, fileBytes: 800 * KiB });

    await gw.db.pool.query(`UPDATE "Instance" SET "quotaBytes" = $2 WHERE "address" = $1`, [alice.address, 100 * KiB]);
    try {
      const small = await call(gw, 'post', '/upload', owner(), { name: 'd.bin', source: 'usage' }).expect(200);
      await putBytes(gw, small.body.contentUrl, Buffer.alloc(KiB));
      await call(gw, 'put', `/file/${small.body.fileId}/complete`, owner()).expect(413);
    } finally {
      await gw.db.pool.query(`UPDATE "Instance" SET "quotaBytes" = NULL WHERE "address" = $1`, [alice.address]);
    }
    expect(b.fileId).toBeDefined();
    await noDrift();
  });

  it('keeps a deleted file in the trash, Deleted to every reader, and restores it with the same bytes and permissions', async () => {
    const bytes = Buffer.from('precious bytes');
    const file = await uploadFile(gw, owner(), { name: 'keep.txt', source: 'trash' }, bytes);
    await call(gw, 'get', `/allowAccess/${file.fileId}/${bob.userId}?content=true`, owner()).expect(200);
    const before = await call(gw, 'get', `/file/${file.fileId}`, owner()).expect(200);

    const deleted = await call(gw, 'delete', `/file/${file.fileId}`, owner()).expect(200);
    expect(deleted.body.status).toEqual({ status: 'Deleted' });
    // Content and shares suspended for everyone; a search for Deleted finds it as before.
    await call(gw, 'get', `/content/${file.fileId}`, owner()).expect(404);
    await call(gw, 'get', `/content/${file.fileId}`, asBob()).expect(404);
    expect((await call(gw, 'get', `/file/${file.fileId}`, asBob()).expect(200)).body).not.toHaveProperty('contentUrl');
    const search = await call(gw, 'post', '/search', owner(), { source: 'trash', status: { status: 'Deleted' } }).expect(200);
    expect(search.body.map((f: { fileId: string }) => f.fileId)).toEqual([file.fileId]);
    // Completing it again is refused, as for any deleted file.
    await call(gw, 'put', `/file/${file.fileId}/complete`, owner()).expect(409);

    const trash = await call(gw, 'get', '/trash', owner()).expect(200);
    expect(trash.body).toEqual([
      expect.objectContaining({ fileId: file.fileId, status: { status: 'Deleted' }, trashedAt: expect.any(String), size: bytes.length }),
    ]);
    await call(gw, 'get', '/trash', asBob()).expect(403);
    await call(gw, 'post', `/trash/${file.fileId}/restore`, asBob()).expect(403);

    const restored = await call(gw, 'post', `/trash/${file.fileId}/restore`, owner()).expect(200);
    expect(restored.body.permissions).toEqual(before.body.permissions);
    expect(restored.body.status).toEqual({ status: 'Completed', size: bytes.length });
    const again = await call(gw, 'get', `/file/${file.fileId}`, asBob()).expect(200);
    expect((await getBytes(gw, again.body.contentUrl)).body).toEqual(bytes);
    expect((await call(gw, 'get', '/trash', owner())).body).toEqual([]);
    await call(gw, 'post', `/trash/${file.fileId}/restore`, owner()).expect(404);
    await noDrift();
  });

  it('serves a deleted file at no address issued before, bytes or thumbnail, and the same bytes at addresses issued after a restore', async () => {
    const bytes = randomBytes(64 * KiB);
    const file = await uploadFile(gw, owner(), { name: 'secret.png', source: 'gone' }, bytes);
    const picture = Buffer.from('a small picture');
    await gw.blobStore.write(thumbnailKey(alice.address, file.fileId), Readable.from([picture]), { contentType: 'image/webp' });
    expect(
      await new FileRepository(gw.db).setThumbnail(await instanceId(alice.address), file.fileId, { width: 1, height: 1, taken: null }),
    ).toBe(true);
    const issued = (await call(gw, 'get', `/file/${file.fileId}`, owner()).expect(200)).body;
    // A shared reader's address too (GET /content answers with one).
    await call(gw, 'get', `/allowAccess/${file.fileId}/${bob.userId}?content=true`, owner()).expect(200);
    const bobs = (await call(gw, 'get', `/content/${file.fileId}`, asBob()).expect(303)).headers.location as string;
    const addresses = [issued.contentUrl as string, issued.thumbnailUrl as string, bobs];
    for (const address of addresses) expect((await getBytes(gw, address)).status).toBe(200);

    await call(gw, 'delete', `/file/${file.fileId}`, owner()).expect(200);
    for (const address of addresses) expect((await getBytes(gw, address)).status).toBe(404);

    await call(gw, 'post', `/trash/${file.fileId}/restore`, owner()).expect(200);
    // Issued after the restore (on S3 possibly the same text as before: a signature's time has whole seconds).
    const again = (await call(gw, 'get', `/file/${file.fileId}`, asBob()).expect(200)).body;
    expect(await getBytes(gw, again.contentUrl)).toEqual({ status: 200, body: bytes });
    expect(await getBytes(gw, again.thumbnailUrl)).toEqual({ status: 200, body: picture });
    expect([await stored(alice.address, file.fileId), await inTrash(alice.address, file.fileId)]).toEqual([bytes.length, null]);
    await noDrift();
  });

  it('finishes a move into the trash or out of it that a crash cut short: the next worker run, or the call again', async () => {
    const files = new FileRepository(gw.db);
    const id = await instanceId(alice.address);
    const bytes = Buffer.from('cut short');
    const file = await uploadFile(gw, owner(), { name: 'crash.txt', source: 'crash' }, bytes);
    const issued = (await call(gw, 'get', `/file/${file.fileId}`, owner()).expect(200)).body.contentUrl as string;
    const run = trashPurgeProcessor({ files, store: gw.blobStore, clock: () => new Date(), trashDays: 30 });

    // What a kill -9 right after the delete's commit leaves: the row in the trash and its move due, the
    // bytes still under their key, where the address issued before still reaches them.
    await files.trash(id, file.fileId, new Date(), SYSTEM);
    expect((await getBytes(gw, issued)).status).toBe(200);
    expect(await run()).toEqual({ moved: 1, purged: 0 });
    expect((await getBytes(gw, issued)).status).toBe(404);
    expect(await run()).toEqual({ moved: 0, purged: 0 });

    // A restore cut short: the file is Completed again, its bytes in the trash until the move resumes.
    await files.restore(id, file.fileId, new Date(), SYSTEM);
    const fresh = (await call(gw, 'get', `/file/${file.fileId}`, owner()).expect(200)).body.contentUrl as string;
    expect((await getBytes(gw, fresh)).status).toBe(404);
    expect(await run()).toEqual({ moved: 1, purged: 0 });
    expect(await getBytes(gw, fresh)).toEqual({ status: 200, body: bytes });

    // The delete called again (the client saw no answer) finishes the move itself.
    await files.trash(id, file.fileId, new Date(), SYSTEM);
    await call(gw, 'delete', `/file/${file.fileId}`, owner()).expect(200);
    expect((await getBytes(gw, fresh)).status).toBe(404);
    expect(await run()).toEqual({ moved: 0, purged: 0 });

    // A purge of a file whose move was cut short leaves no object under either key.
    await call(gw, 'post', `/trash/${file.fileId}/restore`, owner()).expect(200);
    await files.trash(id, file.fileId, new Date(), SYSTEM);
    await call(gw, 'delete', `/trash/${file.fileId}`, owner()).expect(200);
    const key = objectKey(alice.address, file.fileId);
    expect([await gw.blobStore.stat(key), await gw.blobStore.stat(trashKey(key))]).toEqual([null, null]);
    expect(await run()).toEqual({ moved: 0, purged: 0 });
    await noDrift();
  });

  it('purges one file or the whole trash: no object is left, and the row stays Deleted', async () => {
    const one = await uploadFile(gw, owner(), { name: 'one.txt', source: 'purge' });
    const two = await uploadFile(gw, owner(), { name: 'two.txt', source: 'purge' });
    const three = await uploadFile(gw, owner(), { name: 'three.txt', source: 'purge' });
    for (const f of [one, two, three]) await call(gw, 'delete', `/file/${f.fileId}`, owner()).expect(200);

    const purged = await call(gw, 'delete', `/trash/${one.fileId}`, owner()).expect(200);
    expect(purged.body.status).toEqual({ status: 'Deleted' });
    expect([await stored(alice.address, one.fileId), await inTrash(alice.address, one.fileId)]).toEqual([null, null]);
    await call(gw, 'delete', `/trash/${one.fileId}`, owner()).expect(404);
    await call(gw, 'post', `/trash/${one.fileId}/restore`, owner()).expect(404);
    expect([await stored(alice.address, two.fileId), await inTrash(alice.address, two.fileId)]).toEqual([null, 5]);

    expect((await call(gw, 'delete', '/trash', owner()).expect(200)).body).toEqual({ purged: 2 });
    for (const f of [two, three]) {
      expect([await stored(alice.address, f.fileId), await inTrash(alice.address, f.fileId)]).toEqual([null, null]);
      expect(await gw.blobStore.stat(thumbnailKey(alice.address, f.fileId))).toBeNull();
    }
    const search = await call(gw, 'post', '/search', owner(), { source: 'purge', status: { status: 'Deleted' } }).expect(200);
    expect(search.body).toHaveLength(3);
    expect(await usage(alice.address)).toMatchObject({ files: 0, fileBytes: 0 });
    await noDrift();
  });

  it('refuses bytes at the signed upload address of a trashed file', async () => {
    const started = await call(gw, 'post', '/upload', owner(), { name: 'late.txt', source: 'late' }).expect(200);
    await putBytes(gw, started.body.contentUrl, Buffer.from('first'));
    await call(gw, 'put', `/file/${started.body.fileId}/complete`, owner()).expect(200);
    await call(gw, 'delete', `/file/${started.body.fileId}`, owner()).expect(200);
    const status = await putBytes(gw, started.body.contentUrl, Buffer.from('second'));
    if (store === 'local') expect(status).toBe(403);
    // S3 takes the PUT itself (a presigned address cannot ask the gateway), under the file's key: the
    // bytes in the trash are not those, and they are the ones restored. A completion stays refused.
    await call(gw, 'put', `/file/${started.body.fileId}/complete`, owner()).expect(409);
    const restored = await call(gw, 'post', `/trash/${started.body.fileId}/restore`, owner()).expect(200);
    expect(restored.body.status).toEqual({ status: 'Completed', size: 5 });
    const file = await call(gw, 'get', `/file/${started.body.fileId}`, owner()).expect(200);
    expect((await getBytes(gw, file.body.contentUrl)).body.toString()).toBe('first');
  });

  it('purges files trashed TRASH_DAYS ago with the timed job, and only those', async () => {
    const old = await uploadFile(gw, owner(), { name: 'old.txt', source: 'job' });
    await call(gw, 'delete', `/file/${old.fileId}`, owner()).expect(200);
    const trashedOld = gw.clock().getTime();
    gw.clock.advance(60);
    const recent = await uploadFile(gw, owner(), { name: 'recent.txt', source: 'job' });
    await call(gw, 'delete', `/file/${recent.fileId}`, owner()).expect(200);

    // The worker's clock, 30 days and 30 seconds after the first delete.
    const clock = () => new Date(trashedOld + (30 * 24 * 3600 + 30) * 1000);
    const purge = trashPurgeProcessor({ files: new FileRepository(gw.db), store: gw.blobStore, clock, trashDays: 30, batchSize: 1 });
    expect(await purge()).toEqual({ moved: 0, purged: 1 });
    expect([await stored(alice.address, old.fileId), await inTrash(alice.address, old.fileId)]).toEqual([null, null]);
    expect(await inTrash(alice.address, recent.fileId)).toBe(5);
    const trash = await call(gw, 'get', '/trash', owner()).expect(200);
    expect(trash.body.map((f: { fileId: string }) => f.fileId)).toEqual([recent.fileId]);
    expect(await purge()).toEqual({ moved: 0, purged: 0 });
    await noDrift();
  });
});
