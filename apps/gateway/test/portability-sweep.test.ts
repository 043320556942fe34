// The export sweep: a ready archive stays downloadable for EXPORT_TTL_HOURS, then the worker removes it and
// its row; an import never completed goes the same way. Files and other instances' archives stay.
import { PortabilityRepository } from '@pds/db';
import { exportArchiveProcessor } from '../src/jobs/export-archive';
import { exportSweepProcessor } from '../src/jobs/export-sweep';
import { exportKey, importKey } from '../src/portability/keys';
import { callerRequests, signUp, type TestGateway } from '../../../test/support/gateway';
import { startFilesGateway, uploadFile } from './files-support';

const TTL_HOURS = 48;

describe('the export sweep', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startFilesGateway('local');
  });
  afterAll(() => gw.close());

  it('removes archives past EXPORT_TTL_HOURS and stale uploads of imports, and nothing else', async () => {
    const repository = new PortabilityRepository(gw.db);
    const alice = await signUp(gw.app, 'alice');
    const bob = await signUp(gw.app, 'bob');
    const api = callerRequests(gw.app, alice, alice.address);
    const { fileId } = await uploadFile(
      gw,
      { address: alice.address, token: alice.token },
      { name: 'a.txt', source: 's' },
      Buffer.from('a'),
    );
    const started = await api.post('/api/v2.6/export');
    expect(started.status).toBe(202);
    const exportId = started.body.exportId as string;
    const runExport = exportArchiveProcessor({ repository, store: gw.blobStore, clock: gw.clock, ttlHours: TTL_HOURS });
    const instanceId = (await gw.registry.resolve(alice.address))?.instance.id as string;
    await runExport({ data: { instanceId, address: alice.address, id: exportId }, attemptsMade: 0, opts: { attempts: 8 } });
    expect((await api.get(`/api/v2.6/export/${exportId}`)).body).toMatchObject({ status: 'ready', downloadUrl: expect.any(String) });
    const upload = await callerRequests(gw.app, bob, bob.address).post('/api/v2.6/import');
    expect(upload.status).toBe(201);

    const sweep = exportSweepProcessor({ repository, store: gw.blobStore, clock: gw.clock, ttlHours: TTL_HOURS });
    expect(await sweep()).toEqual({ removed: 0 });
    expect(await gw.blobStore.stat(exportKey(alice.address, exportId))).toBeGreaterThan(0);

    gw.clock.advance(TTL_HOURS * 3600 - 60);
    // Still listed, but past its expiry no address is handed out (the sweep may come a few minutes later).
    gw.clock.advance(120);
    const expired = (await api.get(`/api/v2.6/export/${exportId}`)).body;
    expect(expired.status).toBe('ready');
    expect(expired.downloadUrl).toBeUndefined();

    expect(await sweep()).toEqual({ removed: 2 });
    expect(await gw.blobStore.stat(exportKey(alice.address, exportId))).toBeNull();
    expect(await gw.blobStore.stat(importKey(bob.address, upload.body.importId))).toBeNull();
    expect((await api.get(`/api/v2.6/export/${exportId}`)).status).toBe(404);
    expect((await api.get('/api/v2.6/export')).body).toEqual([]);
    expect((await gw.blobStore.stat(`${alice.address}/${fileId}`)) ?? 0).toBe(1);
  });
});
