// Thumbnails on both stores, as clients see them: an image that completes gets a small WebP picture, made
// by the worker's job and stored beside the bytes; the listing carries its signed address and
// GET /files/thumbnail/:fileId redirects to it under the rules of content. Anything else keeps no picture.
import type { Worker } from 'bullmq';
import sharp from 'sharp';
import { FileRepository } from '@pds/db';
import { createLogger } from '@pds/runtime';
import { blockingRedis, QUEUE_NAMES, runQueue } from '@pds/queue';
import { removeOrphans, thumbnailKey, trashKey, type S3BlobStore } from '@pds/storage';
import { thumbnailProcessor } from '../src/jobs/thumbnail';
import { eventually } from '../../../test/support/eventually';
import { addUser, requireEnv, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { call, getBytes, startFilesGateway, STORES, uploadFile, type As } from './files-support';

/** A picture of `width` × `height` in `format`, with a gradient so it does not compress to nothing. */
async function picture(format: 'jpeg' | 'png' | 'webp' | 'gif', width: number, height: number): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = (i * 7) % 251;
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .toFormat(format)
    .toBuffer();
}

describe.each(STORES)('on the %s store', (store) => {
  let gw: TestGateway;
  let alice: SignedUp;
  let owner: As;
  let bob: As;
  let bobId: string;
  let worker: Worker;
  let files: FileRepository;

  beforeAll(async () => {
    gw = await startFilesGateway(store);
    alice = await signUp(gw.app, 'alice');
    owner = { address: alice.address, token: alice.token };
    const added = await addUser(gw.app, alice, 'bob');
    bob = { address: alice.address, token: added.token };
    bobId = added.userId;
    files = new FileRepository(gw.db);
    // The gateway worker's job, on the queue this gateway sends to.
    const connection = blockingRedis({ url: requireEnv('TEST_REDIS_URL') });
    worker = runQueue(
      QUEUE_NAMES.thumbnail,
      thumbnailProcessor({ files, store: gw.blobStore }),
      { connection, prefix: gw.redisPrefix },
      createLogger({ level: 'silent' }),
    );
    worker.on('closed', () => connection.disconnect());
  });
  afterAll(async () => {
    await worker.close();
    await gw.close();
  });

  /** The file's record in the owner's listing, once its thumbnail is there. */
  const withThumbnail = (fileId: string) =>
    eventually(async () => {
      const res = await call(gw, 'get', '/listing?take=200', owner);
      return (res.body.files as { fileId: string; thumbnailUrl?: string }[]).find((file) => file.fileId === fileId && file.thumbnailUrl);
    });

  it('makes a WebP of at most 320 px of a JPEG, a PNG, a WebP and a GIF, in proportion', async () => {
    for (const [format, name] of [
      ['jpeg', 'wide.jpg'],
      ['png', 'wide.png'],
      ['webp', 'wide.webp'],
      ['gif', 'wide.gif'],
    ] as const) {
      const { fileId } = await uploadFile(gw, owner, { name, source: 'camera' }, await picture(format, 1200, 800));
      const listed = await withThumbnail(fileId);
      const fetched = await getBytes(gw, listed.thumbnailUrl as string);
      expect(fetched.status).toBe(200);
      const meta = await sharp(fetched.body).metadata();
      expect({ name, format: meta.format, width: meta.width, height: meta.height }).toEqual({
        name,
        format: 'webp',
        width: 320,
        height: 213,
      });
    }
  });

  it('redirects the owner, a user the file was shared with and anyone for a public file; 404 for the rest, as for content', async () => {
    const { fileId } = await uploadFile(gw, owner, { name: 'tall.jpg', source: 'camera' }, await picture('jpeg', 300, 600));
    await withThumbnail(fileId);
    const ownerView = await call(gw, 'get', `/thumbnail/${fileId}`, owner);
    expect(ownerView.status).toBe(303);
    const small = await sharp((await getBytes(gw, ownerView.headers.location as string)).body).metadata();
    // Never enlarged past the original's pixels.
    expect([small.width, small.height]).toEqual([160, 320]);

    const refused = await call(gw, 'get', `/thumbnail/${fileId}`, bob);
    const missing = await call(gw, 'get', '/thumbnail/nothing.jpg', bob);
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ error: 'Not Found', message: `File ${fileId} not found` });
    expect(missing.body).toEqual({ error: 'Not Found', message: 'File nothing.jpg not found' });
    expect((await call(gw, 'get', `/thumbnail/${fileId}`, { address: alice.address })).status).toBe(404);
    // Seeing a file is not reading it: the thumbnail shows its content.
    await call(gw, 'get', `/allowAccess/${fileId}/${bobId}?content=false`, owner);
    expect((await call(gw, 'get', `/thumbnail/${fileId}`, bob)).status).toBe(404);
    await call(gw, 'get', `/allowAccess/${fileId}/${bobId}?content=true`, owner);
    expect((await call(gw, 'get', `/thumbnail/${fileId}`, bob)).status).toBe(303);
    await call(gw, 'get', `/allowAccessPublic/${fileId}`, owner);
    expect((await call(gw, 'get', `/thumbnail/${fileId}`, { address: alice.address })).status).toBe(303);
  });

  it('makes none for bytes that are no accepted image, whatever the name, nor past the pixel limit', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><rect width="100" height="100"/></svg>');
    const cases = [
      { name: 'text.jpg', bytes: Buffer.from('not a picture at all') },
      { name: 'drawing.png', bytes: svg },
      { name: 'cut.jpg', bytes: (await picture('jpeg', 400, 400)).subarray(0, 200) },
      // 8000 × 5001 pixels: past the 40-megapixel limit, refused before it is decoded.
      {
        name: 'huge.png',
        bytes: await sharp({ create: { width: 8000, height: 5001, channels: 3, background: '#888' } })
          .png()
          .toBuffer(),
      },
    ];
    const processor = thumbnailProcessor({ files, store: gw.blobStore });
    for (const { name, bytes } of cases) {
      const { fileId } = await uploadFile(gw, owner, { name, source: 'test' }, bytes);
      // The job itself, as the worker runs it (it may run twice: the result is the same).
      expect(await processor({ data: { instanceId: await instanceId(), address: alice.address, fileId } })).toEqual({
        made: false,
        reason: 'not an accepted image',
      });
      const listed = (await call(gw, 'get', '/listing?take=200', owner)).body.files.find(
        (file: { fileId: string }) => file.fileId === fileId,
      );
      expect({ name, thumbnailUrl: listed.thumbnailUrl }).toEqual({ name, thumbnailUrl: undefined });
      expect((await call(gw, 'get', `/thumbnail/${fileId}`, owner)).status).toBe(404);
      expect(await gw.blobStore.stat(thumbnailKey(alice.address, fileId))).toBeNull();
    }
  });

  async function instanceId(): Promise<string> {
    return (await gw.db.pool.query<{ id: string }>(`SELECT "id" FROM "Instance" WHERE "address" = $1`, [alice.address])).rows[0]!.id;
  }

  it('keeps the thumbnail while the file is in the trash, removes it with the purge, and a job for a deleted file stores nothing', async () => {
    const { fileId } = await uploadFile(gw, owner, { name: 'bye.png', source: 'camera' }, await picture('png', 500, 500));
    await withThumbnail(fileId);
    const key = thumbnailKey(alice.address, fileId);
    expect(await gw.blobStore.stat(key)).toBeGreaterThan(0);
    expect((await call(gw, 'delete', `/file/${fileId}`, owner)).status).toBe(200);
    // In the trash: kept for a restore, under its trash key (where no address reaches it), served to nobody.
    expect([await gw.blobStore.stat(key), await gw.blobStore.stat(trashKey(key))]).toEqual([null, expect.any(Number)]);
    expect((await call(gw, 'get', `/thumbnail/${fileId}`, owner)).status).toBe(404);
    expect((await call(gw, 'delete', `/trash/${fileId}`, owner)).status).toBe(200);
    expect([await gw.blobStore.stat(key), await gw.blobStore.stat(trashKey(key))]).toEqual([null, null]);
    const late = await thumbnailProcessor({ files, store: gw.blobStore })({
      data: { instanceId: await instanceId(), address: alice.address, fileId },
    });
    expect(late).toEqual({ made: false, reason: 'the file is not completed' });
    expect(await gw.blobStore.stat(key)).toBeNull();
  });

  if (store === 's3') {
    it('lets the orphan sweep keep a live file’s thumbnail and remove one whose file is gone', async () => {
      const { fileId } = await uploadFile(gw, owner, { name: 'kept.png', source: 'camera' }, await picture('png', 100, 100));
      await withThumbnail(fileId);
      // A thumbnail a crashed job left behind for a file that was deleted.
      const leftover = thumbnailKey(alice.address, 'deleted.png');
      await gw.blobStore.write(
        leftover,
        (async function* () {
          yield Buffer.from('webp');
        })(),
      );
      const removed = await removeOrphans(gw.blobStore as S3BlobStore, (keys) => files.liveFiles(keys), new Date(Date.now() + 60_000));
      expect(removed).toBeGreaterThanOrEqual(1);
      expect(await gw.blobStore.stat(leftover)).toBeNull();
      expect(await gw.blobStore.stat(thumbnailKey(alice.address, fileId))).toBeGreaterThan(0);
    });
  }
});
