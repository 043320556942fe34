// Resumable uploads (tus 1.0) on both stores, as a tus client sees them: creation by the file's upload
// grant (its signed address or a token that sees it), the offset after each PATCH, the object whole with
// its last byte and step 3 as for any upload; checksums, lengths, quota, a deleted file, a suspended
// instance, termination and the sweep, each with what is left in the store.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { FileRepository, FileUploadRepository } from '@pds/db';
import { objectKey } from '@pds/storage';
import { useGateway } from '../../../test/support/use-gateway';
import { tamperAt } from '../../../test/support/tamper';
import { uploadSweepProcessor } from '../src/jobs/upload-sweep';
import { call, getBytes, STORES } from './files-support';
import { create, head, newFile, patch, resumableLeftovers, TUS, uploadIdOf, uploadResumably, VERSION } from './tus-support';

const KiB = 1024;
const MiB = 1024 * KiB;
const DEADLINE = 3600;
const ADMIN_TOKEN = 'admin-token-for-the-tus-tests-0123456789';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('base64');

describe.each(STORES)('tus on the %s store', (store) => {
  const { gw, owners, users } = useGateway({
    store,
    env: { MAX_UPLOAD_BYTES: String(64 * MiB), UPLOAD_DEADLINE: String(DEADLINE), ADMIN_TOKEN },
    owners: ['alice', 'zed'],
    users: { bob: 'alice' },
  });
  const { alice, zed } = owners;
  const { bob: bobUser } = users;
  /** bob as a caller of alice's instance. */
  const bob = {
    get address() {
      return alice.address;
    },
    get token() {
      return bobUser.token;
    },
  };

  it('answers OPTIONS with the version, extensions, largest upload and checksum algorithm', async () => {
    const res = await request(gw.app).options(TUS).set('Host', alice.address).expect(204);
    expect(res.headers).toMatchObject({
      'tus-resumable': '1.0.0',
      'tus-version': '1.0.0',
      'tus-extension': 'creation,termination,expiration,checksum',
      'tus-max-size': String(64 * MiB),
      'tus-checksum-algorithm': 'sha256',
    });
  });

  it('takes the bytes over several PATCHes, says the offset after each, and step 3 completes the file with them', async () => {
    const bytes = randomBytes(9 * MiB + 123);
    const file = await newFile(gw, alice, 'movie.mp4');
    const created = await create(gw, alice.address, bytes.length, { fileId: file.fileId, filetype: 'video/mp4' }, alice.token).expect(201);
    const location = created.headers.location as string;
    expect(location).toMatch(new RegExp(`^http://${alice.address}${TUS}/[A-Za-z0-9_-]{43}$`));
    expect(new Date(created.headers['upload-expires'] as string).getTime()).toBeGreaterThan(Date.now());
    expect((await head(gw, alice.address, location).expect(200)).headers).toMatchObject({
      'upload-offset': '0',
      'upload-length': String(bytes.length),
    });
    let offset = 0;
    for (const size of [3 * MiB + 1, 5, 6 * MiB]) {
      const res = await patch(gw, alice.address, location, offset, bytes.subarray(offset, offset + size)).expect(204);
      offset += size;
      expect(res.headers['upload-offset']).toBe(String(offset));
      expect((await head(gw, alice.address, location).expect(200)).headers['upload-offset']).toBe(String(offset));
    }
    await call(gw, 'put', `/file/${file.fileId}/complete`, alice).expect(409);
    await patch(gw, alice.address, location, offset, bytes.subarray(offset)).expect(204);
    const completed = await call(gw, 'put', `/file/${file.fileId}/complete`, alice).expect(200);
    expect(completed.body.status).toEqual({ status: 'Completed', size: bytes.length });
    const content = await getBytes(gw, completed.body.contentUrl as string);
    expect(sha256(content.body)).toBe(sha256(bytes));
    expect(await resumableLeftovers(gw, alice.address, file.fileId, location)).toEqual([]);
    // Its upload ended with the completion.
    await head(gw, alice.address, location).expect(404);
    // The events of any upload: uploaded at step 1, completed at step 3.
    const events = await gw.db.event.findMany({ where: { object: { equals: { fileId: file.fileId } } }, orderBy: { id: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['file.uploaded', 'file.completed']);
  });

  it('is created with the signed upload address alone, and refuses an altered one', async () => {
    const file = await newFile(gw, bob);
    const created = await create(gw, alice.address, 10, { contentUrl: file.contentUrl }).expect(201);
    await patch(gw, alice.address, created.headers.location as string, 0, Buffer.from('0123456789')).expect(204);
    await call(gw, 'put', `/file/${file.fileId}/complete`, bob).expect(200);

    const other = await newFile(gw, alice);
    const altered = tamperAt(other.contentUrl);
    expect((await create(gw, alice.address, 10, { contentUrl: altered }).expect(403)).body).toEqual({
      error: 'Forbidden',
      message: 'The signed address is invalid or has expired',
    });
    // Another instance's address is not a grant here.
    await create(gw, zed.address, 10, { contentUrl: other.contentUrl }).expect(403);
  });

  it('is created with a token only for a file its account sees, and only while the file is New', async () => {
    const file = await newFile(gw, alice);
    await create(gw, alice.address, 10, { fileId: file.fileId }, bob.token).expect(404);
    await create(gw, alice.address, 10, { fileId: file.fileId }).expect(401);
    await create(gw, alice.address, 10, {}, alice.token).expect(400);
    await create(gw, alice.address, 10, { fileId: file.fileId }, 'not-a-token').expect(401);
    const { fileId } = await uploadResumably(gw, alice, Buffer.from('done'));
    await call(gw, 'put', `/file/${fileId}/complete`, alice).expect(200);
    await create(gw, alice.address, 4, { fileId }, alice.token).expect(409);
  });

  it('refuses requests outside the protocol with its statuses, and stores nothing of them', async () => {
    const file = await newFile(gw, alice);
    await request(gw.app).post(TUS).set('Host', alice.address).set('X-Auth-Token', alice.token).set('Upload-Length', '5').expect(412);
    await create(gw, alice.address, 64 * MiB + 1, { fileId: file.fileId }, alice.token).expect(413);
    await request(gw.app)
      .post(TUS)
      .set('Host', alice.address)
      .set(VERSION)
      .set('X-Auth-Token', alice.token)
      .set('Upload-Length', 'five')
      .expect(400);
    const location = (await create(gw, alice.address, 10, { fileId: file.fileId }, alice.token).expect(201)).headers.location as string;
    await patch(gw, alice.address, location, 3, Buffer.from('abc')).expect(409);
    await patch(gw, alice.address, location, 0, Buffer.from('abc'), { 'Content-Type': 'application/octet-stream' }).expect(415);
    await patch(gw, alice.address, location, 0, Buffer.from('abc'), { 'Upload-Checksum': 'md5 AAAA' }).expect(400);
    await head(gw, alice.address, `${location}x`).expect(404);
    expect((await head(gw, alice.address, location).expect(200)).headers['upload-offset']).toBe('0');
  });

  it('refuses a PATCH whose bytes do not match its checksum (460), keeps nothing of it, and takes the right bytes after', async () => {
    const bytes = randomBytes(2 * MiB);
    const file = await newFile(gw, alice);
    const location = (await create(gw, alice.address, bytes.length, { fileId: file.fileId }, alice.token).expect(201)).headers
      .location as string;
    await patch(gw, alice.address, location, 0, bytes.subarray(0, MiB), {
      'Upload-Checksum': `sha256 ${sha256(bytes.subarray(0, MiB))}`,
    }).expect(204);
    const altered = Buffer.from(bytes.subarray(MiB));
    altered[77] = (altered[77] as number) ^ 0xff;
    const refused = await patch(gw, alice.address, location, MiB, altered, {
      'Upload-Checksum': `sha256 ${sha256(bytes.subarray(MiB))}`,
    }).expect(460);
    expect(refused.body).toEqual({ error: 'Checksum Mismatch', message: expect.stringMatching(/none of them were stored/) });
    expect((await head(gw, alice.address, location).expect(200)).headers['upload-offset']).toBe(String(MiB));
    await patch(gw, alice.address, location, MiB, bytes.subarray(MiB), {
      'Upload-Checksum': `sha256 ${sha256(bytes.subarray(MiB))}`,
    }).expect(204);
    const completed = await call(gw, 'put', `/file/${file.fileId}/complete`, alice).expect(200);
    expect(sha256((await getBytes(gw, completed.body.contentUrl as string)).body)).toBe(sha256(bytes));
  });

  it('refuses bytes past the declared length, with a Content-Length or without one', async () => {
    const file = await newFile(gw, alice);
    const location = (await create(gw, alice.address, 100, { fileId: file.fileId }, alice.token).expect(201)).headers.location as string;
    await patch(gw, alice.address, location, 0, randomBytes(101)).expect(413);
    expect((await head(gw, alice.address, location).expect(200)).headers['upload-offset']).toBe('0');
    // Chunked (no Content-Length): refused once the bytes pass the length.
    const chunked = await new Promise<number>((resolve, reject) => {
      const headers = { Host: alice.address, ...VERSION, 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': '0' };
      const req = http.request(
        { host: '127.0.0.1', port: listening.port, path: new URL(location).pathname, method: 'PATCH', headers },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.write(randomBytes(60));
      req.end(randomBytes(60));
    });
    expect(chunked).toBe(413);
    const offset = Number((await head(gw, alice.address, location).expect(200)).headers['upload-offset']);
    expect(offset).toBeLessThanOrEqual(100);
    await call(gw, 'put', `/file/${file.fileId}/complete`, alice).expect(409);
  });

  const instanceOf = async (address: string) => (await gw.db.instance.findUniqueOrThrow({ where: { address } })).id;
  const setQuota = (address: string, bytes: number | null) =>
    gw.db.pool.query(`UPDATE "Instance" SET "quotaBytes" = $2 WHERE "address" = $1`, [address, bytes]);

  it("holds each live upload's length against the quota from its creation, exactly, however many are created at once", async () => {
    const usage = async () =>
      (await gw.db.instanceUsage.findMany({ where: { instanceId: await instanceOf(zed.address) } })).reduce(
        (n, u) => n + Number(u.fileBytes),
        0,
      );
    const before = await usage();
    await setQuota(zed.address, before + 10 * MiB);
    try {
      const files = await Promise.all(Array.from({ length: 6 }, () => newFile(gw, zed)));
      const created = await Promise.all(files.map((file) => create(gw, zed.address, 3 * MiB, { fileId: file.fileId }, zed.token)));
      expect(created.map((res) => res.status).sort()).toEqual([201, 201, 201, 413, 413, 413]);
      const taken = files.filter((_, i) => created[i]!.status === 201);
      const bytes = taken.map(() => randomBytes(3 * MiB));
      // Sent at once, in pieces, and completed at once.
      await Promise.all(
        taken.map(async (file, i) => {
          const location = created[files.indexOf(file)]!.headers.location as string;
          await patch(gw, zed.address, location, 0, bytes[i]!.subarray(0, MiB)).expect(204);
          await patch(gw, zed.address, location, MiB, bytes[i]!.subarray(MiB)).expect(204);
        }),
      );
      const completed = await Promise.all(taken.map((file) => call(gw, 'put', `/file/${file.fileId}/complete`, zed)));
      expect(completed.map((res) => res.status)).toEqual([200, 200, 200]);
      expect(await usage()).toBe(before + 9 * MiB);
      // What is left of the quota, and no more.
      const last = await newFile(gw, zed);
      await create(gw, zed.address, MiB + 1, { fileId: last.fileId }, zed.token).expect(413);
      await create(gw, zed.address, MiB, { fileId: last.fileId }, zed.token).expect(201);
    } finally {
      await setQuota(zed.address, null);
    }
  });

  it('checks the quota again at step 3, and removes bytes that no longer fit', async () => {
    const file = await newFile(gw, zed);
    const location = (await create(gw, zed.address, 2 * MiB, { fileId: file.fileId }, zed.token).expect(201)).headers.location as string;
    await patch(gw, zed.address, location, 0, randomBytes(2 * MiB)).expect(204);
    await setQuota(zed.address, MiB);
    try {
      const refused = await call(gw, 'put', `/file/${file.fileId}/complete`, zed).expect(413);
      expect(refused.body.message).toMatch(/quota/);
      expect(await gw.blobStore.stat(objectKey(zed.address, file.fileId))).toBeNull();
    } finally {
      await setQuota(zed.address, null);
    }
  });

  it('stops an upload whose file was deleted, and drops what the store held of it', async () => {
    const file = await newFile(gw, alice);
    const location = (await create(gw, alice.address, 20 * MiB, { fileId: file.fileId }, alice.token).expect(201)).headers
      .location as string;
    await patch(gw, alice.address, location, 0, randomBytes(9 * MiB + 5)).expect(204);
    expect(await resumableLeftovers(gw, alice.address, file.fileId, location)).not.toEqual([]);
    await call(gw, 'delete', `/file/${file.fileId}`, alice).expect(200);
    // The upload ended with its file: its address answers as for no upload.
    expect((await head(gw, alice.address, location).expect(404)).headers['upload-offset']).toBeUndefined();
    await patch(gw, alice.address, location, 9 * MiB + 5, randomBytes(10)).expect(404);
    expect(await resumableLeftovers(gw, alice.address, file.fileId, location)).toEqual([]);
    expect(await gw.db.fileUpload.count({ where: { fileId: file.fileId } })).toBe(0);
  });

  it('stops while its instance is suspended, and goes on where it was once resumed', async () => {
    const operator = (action: 'suspend' | 'resume') =>
      request(gw.admin!)
        .post(`/instances/${zed.address}/${action}`)
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .send({ reason: 'tus test' })
        .expect(200);
    const bytes = randomBytes(MiB);
    const file = await newFile(gw, zed);
    const location = (await create(gw, zed.address, bytes.length, { fileId: file.fileId }, zed.token).expect(201)).headers
      .location as string;
    await patch(gw, zed.address, location, 0, bytes.subarray(0, 1000)).expect(204);
    await operator('suspend');
    try {
      await head(gw, zed.address, location).expect(423);
      await patch(gw, zed.address, location, 1000, bytes.subarray(1000)).expect(423);
    } finally {
      await operator('resume');
    }
    expect((await head(gw, zed.address, location).expect(200)).headers['upload-offset']).toBe('1000');
    await patch(gw, zed.address, location, 1000, bytes.subarray(1000)).expect(204);
    await call(gw, 'put', `/file/${file.fileId}/complete`, zed).expect(200);
  });

  it('answers 423 while another request writes the upload', async () => {
    const file = await newFile(gw, alice);
    const location = (await create(gw, alice.address, 10, { fileId: file.fileId }, alice.token).expect(201)).headers.location as string;
    const uploads = new FileUploadRepository(gw.db);
    const id = createHash('sha256')
      .update(location.slice(location.lastIndexOf('/') + 1))
      .digest('hex');
    const instanceId = await instanceOf(alice.address);
    expect(await uploads.claim(instanceId, id, 'someone', gw.clock(), new Date(gw.clock().getTime() + 60_000))).toBe(true);
    await patch(gw, alice.address, location, 0, Buffer.from('0123456789')).expect(423);
    await uploads.release(instanceId, id, 'someone');
    await patch(gw, alice.address, location, 0, Buffer.from('0123456789')).expect(204);
  });

  it('is terminated with DELETE: nothing of it is left, and its file stays New', async () => {
    const file = await newFile(gw, alice);
    const location = (await create(gw, alice.address, 20 * MiB, { fileId: file.fileId }, alice.token).expect(201)).headers
      .location as string;
    await patch(gw, alice.address, location, 0, randomBytes(9 * MiB)).expect(204);
    await request(gw.app).delete(new URL(location).pathname).set('Host', alice.address).expect(412);
    await request(gw.app).delete(new URL(location).pathname).set('Host', alice.address).set(VERSION).expect(204);
    await head(gw, alice.address, location).expect(404);
    expect(await resumableLeftovers(gw, alice.address, file.fileId, location)).toEqual([]);
    expect((await call(gw, 'get', `/file/${file.fileId}`, alice).expect(200)).body.status).toEqual({ status: 'New' });
  });

  it('is ended by the sweep once it expired, with nothing left in the store; until then its file is kept, however old', async () => {
    const sweep = (secondsAfterNow: number) =>
      uploadSweepProcessor({
        files: new FileRepository(gw.db),
        uploads: new FileUploadRepository(gw.db),
        store: gw.blobStore,
        objectKey,
        clock: () => new Date(gw.clock().getTime() + secondsAfterNow * 1000),
        uploadDeadline: DEADLINE,
      })();
    const file = await newFile(gw, zed);
    const location = (await create(gw, zed.address, 20 * MiB, { fileId: file.fileId }, zed.token).expect(201)).headers.location as string;
    await patch(gw, zed.address, location, 0, randomBytes(9 * MiB + 1)).expect(204);
    const kept = async () => ({
      upload: await gw.db.fileUpload.count({ where: { id: uploadIdOf(location) } }),
      file: await gw.db.file.count({ where: { fileId: file.fileId, instanceId: await instanceOf(zed.address) } }),
      leftovers: (await resumableLeftovers(gw, zed.address, file.fileId, location)).length > 0,
    });
    // Resumed just before the file's own deadline: the upload, and with it the file, live on.
    gw.clock.advance(DEADLINE - 60);
    try {
      const resumed = await patch(gw, zed.address, location, 9 * MiB + 1, randomBytes(MiB)).expect(204);
      expect(new Date(resumed.headers['upload-expires'] as string).getTime()).toBeGreaterThan(gw.clock().getTime() + (DEADLINE - 5) * 1000);
      await sweep(120);
      expect(await kept()).toEqual({ upload: 1, file: 1, leftovers: true });
      // Abandoned: nothing more comes.
      await sweep(DEADLINE + 1);
      expect(await kept()).toEqual({ upload: 0, file: 0, leftovers: false });
    } finally {
      gw.clock.advance(-(DEADLINE - 60));
    }
    await head(gw, zed.address, location).expect(404);
  });

  /** The gateway on a port of its own, for requests supertest cannot make (a chunked body). */
  const listening = { port: 0, server: undefined as http.Server | undefined };
  beforeAll(async () => {
    const server = http.createServer(gw.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    Object.assign(listening, { server, port: (server.address() as AddressInfo).port });
  });
  afterAll(() => new Promise<void>((resolve) => (listening.server ? listening.server.close(() => resolve()) : resolve())));
});
