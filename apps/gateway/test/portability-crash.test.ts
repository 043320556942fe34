// kill -9 of the gateway worker in the middle of an export and in the middle of an import (local store):
// the row never says ready or done early, nothing half-restored is visible, and the next worker picks the
// job up again and finishes it. The job's lock is short (WORKER_OPTIONS), so the restart is quick.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { loadConfigFor } from '@pds/config';
import type { Stoppable } from '@pds/runtime';
import { startGatewayWorker } from '../src/worker';
import { verifyArchive } from '../src/portability/reader';
import { eventually } from '../../../test/support/eventually';
import { callerRequests, CLUSTER, requireEnv, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { call, getBytes, putBytes, startFilesGateway, uploadFile } from './files-support';
import { once } from './portability-fixtures';

const root = path.resolve(__dirname, '../../..');
const MiB = 1024 * 1024;
const FILES = 8;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

jest.setTimeout(240_000);

describe('a worker killed mid-way', () => {
  let gw: TestGateway;
  let child: ChildProcess | undefined;
  let worker: Stoppable | undefined;
  let env: Record<string, string>;
  const hashes = new Map<string, string>();

  beforeAll(async () => {
    gw = await startFilesGateway('local');
    env = {
      LOG_LEVEL: 'silent',
      CLUSTER_DOMAIN: CLUSTER,
      DATABASE_URL: gw.databaseUrl,
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      QUEUE_PREFIX: gw.redisPrefix,
      MASTER_KEY: gw.config.MASTER_KEY?.toString('hex') as string,
      DATA_DIR: gw.config.DATA_DIR,
      STORAGE: 'local',
    };
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await worker?.close();
    await gw.close();
  });

  /** The worker as its own process (one node process, so SIGKILL hits the worker itself). */
  function spawnWorker(): ChildProcess {
    return spawn(process.execPath, ['--conditions=@pds/source', '--import', 'tsx', 'apps/gateway/src/worker-main.ts'], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
  }

  async function killWorker(): Promise<void> {
    const dying = child as ChildProcess;
    dying.kill('SIGKILL');
    await new Promise((resolve) => dying.once('exit', resolve));
    child = undefined;
  }

  const api = (who: SignedUp) => callerRequests(gw.app, who, who.address);
  let archive: Buffer;

  it('export: killed while writing, finished by the next worker, the archive whole', async () => {
    const alice = await signUp(gw.app, 'alice');
    for (let i = 0; i < FILES; i++) {
      const bytes = randomBytes(12 * MiB);
      const { fileId } = await uploadFile(
        gw,
        { address: alice.address, token: alice.token },
        { name: `part${i}.bin`, source: 'disk' },
        bytes,
      );
      hashes.set(fileId, sha256(bytes));
    }
    child = spawnWorker();
    const started = await api(alice).post('/api/v2.6/export');
    expect(started.status).toBe(202);
    const job = () => api(alice).get(`/api/v2.6/export/${started.body.exportId}`);
    // Some files written, not all: the job is in the middle.
    await eventually(async () => (await job()).body.files > 0, 60_000);
    await killWorker();
    const killed = (await job()).body;
    expect(killed).toMatchObject({ status: 'running' });
    expect(killed.downloadUrl).toBeUndefined();

    worker = await startGatewayWorker(loadConfigFor('gateway-worker', env));
    const ready = await eventually(async () => {
      const body = (await job()).body;
      return body.status === 'ready' && body;
    }, 90_000);
    archive = (await getBytes(gw, ready.downloadUrl)).body;
    const report = await verifyArchive(once(archive));
    expect(report).toMatchObject({ ok: true, manifest: { counts: { files: FILES, fileBytes: FILES * 12 * MiB } } });
    await worker.close();
    worker = undefined;
  });

  it('import: killed while restoring, nothing visible meanwhile, finished by the next worker', async () => {
    const bob = await signUp(gw.app, 'bob');
    const created = await api(bob).post('/api/v2.6/import');
    expect(await putBytes(gw, created.body.uploadUrl, archive)).toBe(200);
    child = spawnWorker();
    expect((await api(bob).put(`/api/v2.6/import/${created.body.importId}/complete`)).status).toBe(202);
    const job = () => api(bob).get(`/api/v2.6/import/${created.body.importId}`);
    // Verified (progress 0.5 on) and restoring.
    await eventually(async () => (await job()).body.files > 0, 60_000);
    await killWorker();
    expect((await job()).body.status).toBe('running');
    // The dead attempt's transaction is gone with its connection: not one file shows.
    const listing = await call(gw, 'get', '/listing?status=Completed', { address: bob.address, token: bob.token });
    expect(listing.body.total).toBe(0);

    worker = await startGatewayWorker(loadConfigFor('gateway-worker', env));
    const done = await eventually(async () => {
      const body = (await job()).body;
      return ['done', 'failed'].includes(body.status) && body;
    }, 90_000);
    expect(done).toMatchObject({ status: 'done', counts: { files: FILES } });
    for (const [fileId, hash] of hashes) {
      const content = await call(gw, 'get', `/content/${fileId}`, { address: bob.address, token: bob.token });
      expect(content.status).toBe(303);
      expect(sha256((await getBytes(gw, content.headers.location as string)).body)).toBe(hash);
    }
  });
});
