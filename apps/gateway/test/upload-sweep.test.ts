// The sweep against real PostgreSQL and the local store: files are made through a real gateway (its
// own signed-address routes hold the local store's bytes), then swept with a clock moved past the deadline.
import { FileRepository, FileUploadRepository } from '@pds/db';
import request from 'supertest';
import { objectKey } from '@pds/storage';
import type { SignedUp } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { uploadSweepProcessor } from '../src/jobs/upload-sweep';

const DEADLINE = 3600;
const FILES = '/api/v2.6/files';

const { gw, owners } = useGateway({ store: 'local', env: { UPLOAD_DEADLINE: String(DEADLINE) }, owners: ['alice', 'zed'] });
const { alice, zed } = owners;

async function upload(as: SignedUp, name: string, options: { bytes?: boolean; complete?: boolean; remove?: boolean } = {}) {
  const api = (method: 'post' | 'put' | 'delete', path: string) =>
    request(gw.app)[method](`${FILES}${path}`).set('Host', as.address).set('X-Auth-Token', as.token);
  const started = await api('post', '/upload').send({ name, source: 'sweep' }).expect(200);
  const fileId = started.body.fileId as string;
  if (options.bytes || options.complete) {
    const url = new URL(started.body.contentUrl);
    await request(gw.app)
      .put(url.pathname + url.search)
      .set('Host', url.host)
      .set('x-amz-server-side-encryption', 'AES256')
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('bytes'))
      .expect(200);
  }
  if (options.complete) await api('put', `/file/${fileId}/complete`).expect(200);
  if (options.remove) await api('delete', `/file/${fileId}`).expect(200);
  return { instanceId: as === alice ? await instanceId(alice) : await instanceId(zed), address: as.address, fileId };
}

const instanceId = async (as: SignedUp) => (await gw.db.instance.findUniqueOrThrow({ where: { address: as.address } })).id;

function sweep(secondsAfterGatewayNow: number) {
  return uploadSweepProcessor({
    files: new FileRepository(gw.db),
    uploads: new FileUploadRepository(gw.db),
    store: gw.blobStore,
    objectKey,
    clock: () => new Date(gw.clock().getTime() + secondsAfterGatewayNow * 1000),
    uploadDeadline: DEADLINE,
    batchSize: 2,
  });
}

const exists = async (f: { instanceId: string; fileId: string }) =>
  (await gw.db.file.count({ where: { instanceId: f.instanceId, fileId: f.fileId } })) === 1;

it('removes uploads still New past the deadline, in every instance, with permissions and bytes', async () => {
  const abandoned = [
    await upload(alice, 'a.txt', { bytes: true }),
    await upload(alice, 'b.txt'),
    await upload(zed, 'c.txt', { bytes: true }),
  ];
  const completed = await upload(alice, 'done.txt', { complete: true });
  const deleted = await upload(alice, 'del.txt', { remove: true });
  gw.clock.advance(DEADLINE - 60);
  const young = await upload(alice, 'young.txt', { bytes: true });

  expect(await sweep(120)()).toEqual({ removed: 3, ended: 0 });

  for (const f of abandoned) {
    expect(await exists(f)).toBe(false);
    expect(await gw.db.filePermission.count({ where: { instanceId: f.instanceId, fileId: f.fileId } })).toBe(0);
    expect(await gw.blobStore.stat(objectKey(f.address, f.fileId))).toBeNull();
  }
  for (const f of [completed, deleted, young]) expect(await exists(f)).toBe(true);
  expect(await gw.blobStore.stat(objectKey(completed.address, completed.fileId))).toBe(5);
  expect(await gw.blobStore.stat(objectKey(young.address, young.fileId))).toBe(5);
  expect(await gw.db.filePermission.count({ where: { instanceId: young.instanceId, fileId: young.fileId } })).toBe(1);
});

it('is harmless to run again, and leaves uploads younger than the deadline', async () => {
  expect(await sweep(120)()).toEqual({ removed: 0, ended: 0 });
  expect(await sweep(DEADLINE + 1)()).toEqual({ removed: 1, ended: 0 });
});

it('never hands a swept id out again', async () => {
  const first = await upload(alice, 'reuse.txt');
  expect(await sweep(DEADLINE + 1)()).toEqual({ removed: 1, ended: 0 });
  const second = await upload(alice, 'reuse.txt');
  expect(second.fileId).not.toBe(first.fileId);
});
