// What crashes, late uploads and oversized uploads leave behind is refused or removed (issue 12).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FileRepository } from '@pds/db';
import { LocalBlobStore, objectKey, removeOrphans, S3BlobStore } from '@pds/storage';
import { useGateway } from '../../../test/support/use-gateway';
import { call, putBytes, uploadFile } from './files-support';

describe('on S3', () => {
  const { gw, owners } = useGateway({ store: 's3', env: { MAX_UPLOAD_BYTES: '100' }, owners: ['alice'] });
  const { alice } = owners;

  it('refuses to complete an upload over MAX_UPLOAD_BYTES with 413 and deletes its bytes', async () => {
    const started = await call(gw, 'post', '/upload', alice, { name: 'big.bin', source: 's3' });
    expect(await putBytes(gw, started.body.contentUrl, randomBytes(101))).toBe(200);
    const key = objectKey(alice.address, started.body.fileId);
    expect(await gw.blobStore.stat(key)).toBe(101);
    const completed = await call(gw, 'put', `/file/${started.body.fileId}/complete`, alice);
    expect(completed.status).toBe(413);
    expect(completed.body).toEqual({ error: 'Payload Too Large', message: expect.stringContaining('over the limit of 100') });
    expect(await gw.blobStore.stat(key)).toBeNull();
    expect((await gw.db.file.findFirstOrThrow({ where: { fileId: started.body.fileId } })).status).toBe('New');
  });

  it('accepts exactly MAX_UPLOAD_BYTES', async () => {
    const done = await uploadFile(gw, alice, { name: 'fits.bin', source: 's3' }, randomBytes(100));
    expect(done.status).toEqual({ status: 'Completed', size: 100 });
  });

  it('sweeps objects no live file points to, keeping live ones', async () => {
    const kept = await uploadFile(gw, alice, { name: 'kept.bin', source: 's3' }, randomBytes(10));
    // Bytes PUT to the address of a file deleted while the address was still valid.
    const started = await call(gw, 'post', '/upload', alice, { name: 'late.bin', source: 's3' });
    expect((await call(gw, 'delete', `/file/${started.body.fileId}`, alice)).status).toBe(200);
    expect(await putBytes(gw, started.body.contentUrl, randomBytes(10))).toBe(200);
    // And bytes for a file that never existed.
    const ghost = objectKey(alice.address, 'never-created.bin');
    expect(await putBytes(gw, await gw.blobStore.presignPut(ghost, { ttlSeconds: 60, baseUrl: '' }), randomBytes(10))).toBe(200);

    const files = new FileRepository(gw.db);
    // Objects younger than the cutoff are left alone (their upload may still be landing).
    expect(await removeOrphans(gw.blobStore as S3BlobStore, (k) => files.liveFiles(k), new Date(Date.now() - 3600_000))).toBe(0);
    const removed = await removeOrphans(gw.blobStore as S3BlobStore, (k) => files.liveFiles(k), new Date(Date.now() + 60_000));
    expect(removed).toBe(2);
    expect(await gw.blobStore.stat(objectKey(alice.address, started.body.fileId))).toBeNull();
    expect(await gw.blobStore.stat(ghost)).toBeNull();
    expect(await gw.blobStore.stat(objectKey(alice.address, kept.fileId))).toBe(10);
  });
});

describe('on the local store', () => {
  const { gw, owners } = useGateway({ store: 'local', owners: ['alice'] });
  const { alice } = owners;

  it('refuses bytes for a file deleted while its address is still valid, storing nothing', async () => {
    const started = await call(gw, 'post', '/upload', alice, { name: 'late.bin', source: 'local' });
    expect((await call(gw, 'delete', `/file/${started.body.fileId}`, alice)).status).toBe(200);
    expect(await putBytes(gw, started.body.contentUrl, randomBytes(10))).toBe(403);
    expect(await gw.blobStore.stat(objectKey(alice.address, started.body.fileId))).toBeNull();
  });

  it('removes partial temp files of dead processes and idle ones, keeping a live upload', async () => {
    const tmp = path.join(gw.config.DATA_DIR, 'blobs', 'tmp');
    const exited = spawnSync(process.execPath, ['-e', '0']).pid as number;
    const dead = path.join(tmp, `${exited}-partial`);
    const idle = path.join(tmp, `${process.pid}-idle`);
    const live = path.join(tmp, `${process.pid}-live`);
    for (const file of [dead, idle, live]) writeFileSync(file, randomBytes(100));
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(idle, hourAgo, hourAgo);

    expect(await (gw.blobStore as LocalBlobStore).removeStaleTemp()).toBe(2);
    expect([existsSync(dead), existsSync(idle), existsSync(live)]).toEqual([false, false, true]);
  });
});
