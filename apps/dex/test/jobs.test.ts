import request from 'supertest';
import { parseAppRecord } from '@pds/app-record';
import { jobIds } from '@pds/queue';
import { ADMIN, eventually, PEER_CLUSTER, startTestCluster, type TestCluster } from '../../../test/support/dex';
import { signUp, type SignedUp } from '../../../test/support/gateway';

let c: TestCluster;
let admin: SignedUp;
beforeAll(async () => {
  c = await startTestCluster();
  admin = await signUp(c.gw.app, ADMIN.split('.')[0] as string);
  await eventually(async () => (await c.gw.db.instance.findUnique({ where: { address: ADMIN } }))?.dexState === 'registered');
});
afterAll(() => c.close());

const dexState = async (address: string) => (await c.gw.db.instance.findUniqueOrThrow({ where: { address } })).dexState;
const dexRow = (address: string) => c.dexDb.registeredInstance.findUnique({ where: { address } });

const record = (namespace: string) => {
  const parsed = parseAppRecord({
    title: namespace,
    namespace,
    logoUrl: 'https://x.example/l.png',
    url: 'https://x.example',
    category: 'app',
  });
  if (!parsed.success) throw parsed.error;
  return parsed.record;
};

describe('worker', () => {
  it('retries a registration while the instance gateway is down, and completes once it is up', async () => {
    await c.stopGateway();
    const dora = await signUp(c.gw.app, 'dora');
    // Dex cannot reach the instance: the key fetch fails and is retried.
    await eventually(async () => ((await c.keyFetch.queue.getJob(jobIds.keyFetch(dora.address)))?.attemptsMade ?? 0) >= 1);
    expect(await dexState(dora.address)).toBe('pending');
    await c.startGateway();
    await eventually(async () => (await dexState(dora.address)) === 'registered', 20_000);
    expect((await dexRow(dora.address))?.state).toBe('registered');
  }, 40_000);

  it('requeues at start the registrations that never reached the queue', async () => {
    await c.stopWorker();
    const erin = await signUp(c.gw.app, 'erin');
    // As if Redis had lost the job the gateway queued.
    await (await c.gw.dexRegistration.queue.getJob(jobIds.registration(erin.address)))?.remove();
    await c.startWorker();
    await eventually(async () => (await dexState(erin.address)) === 'registered');
    // Each start upserts the one upload-sweep schedule (fixed id) instead of adding another.
    const schedulers = await c.uploadSweep.queue.getJobSchedulers();
    expect(schedulers).toEqual([expect.objectContaining({ key: 'upload-sweep', every: 5 * 60 * 1000 })]);
  });

  it('marks a registration failed when dex refuses it for good', async () => {
    // An instance row under a domain dex does not certify: dex answers 400, which asking again will not change.
    const address = 'stray.uncertified.test';
    // createMany: Prisma then asks for no RETURNING, whose enum casts a Citus coordinator refuses on the reference table Instance.
    await c.gw.db.instance.createMany({ data: { address, publicKeyPem: '-', privateKeyEnc: '-', keyId: '-' } });
    await c.gw.dexRegistration.enqueue({ address }, jobIds.registration(address));
    await eventually(async () => (await dexState(address)) === 'failed');
    const job = await c.gw.dexRegistration.queue.getJob(jobIds.registration(address));
    expect(job?.attemptsMade).toBe(1);
    expect(await dexRow(address)).toBeNull();
  });

  it('retries an app push while the target gateway is down, then delivers it once', async () => {
    await c.stopGateway();
    const res = await request(c.dexUrl)
      .post('/api/users/update-application')
      .query({ hatFilter: ADMIN, cluster: 'pds.test' })
      .set('x-auth-token', admin.token)
      .send({ title: 'Photos', namespace: 'photos', logoUrl: 'https://p.example/l.png', url: 'https://p.example', category: 'app' });
    expect(res.status).toBe(202);
    const push = await eventually(async () => {
      const p = await c.dexDb.appPush.findFirst({ where: { appId: 'photos' } });
      return p && p.attempts >= 1 && p.state === 'retrying' ? p : null;
    });
    expect(push.lastError).toBeTruthy();
    await c.startGateway();
    const delivered = await eventually(async () => {
      const p = await c.dexDb.appPush.findUniqueOrThrow({ where: { id: push.id } });
      return p.state === 'delivered' ? p : null;
    }, 20_000);
    expect(delivered.attempts).toBeGreaterThanOrEqual(2);
    const app = await c.gw.db.application.findFirstOrThrow({ where: { appId: 'photos' } });
    expect(app.version).toBe(1);
  }, 40_000);

  it('does no harm when a job runs twice', async () => {
    const gina = `gina.${PEER_CLUSTER}`;
    await c.fakes.add(gina);
    await request(c.dexUrl).post('/api/users/registerHat').send({ hatAddress: gina }).expect(200);
    const before = await dexRow(gina);
    // The same key fetch again: the stored key and state stay as they were.
    const again = await c.keyFetch.enqueue({ address: gina }, jobIds.keyFetch(gina));
    await eventually(async () => again.isCompleted());
    expect(await dexRow(gina)).toEqual(before);

    const res = await request(c.dexUrl)
      .post('/api/users/update-application')
      .query({ hatFilter: gina, cluster: PEER_CLUSTER })
      .set('x-auth-token', admin.token)
      .send(record('maps'));
    expect(res.status).toBe(202);
    const push = await eventually(async () => {
      const p = await c.dexDb.appPush.findFirst({ where: { appId: 'maps', state: 'delivered' } });
      return p ?? null;
    });
    // The same push job again: it sees the delivery and sends nothing.
    const rerun = await c.appPush.enqueue(
      { pushId: push.id, address: gina, record: record('maps'), version: push.version },
      jobIds.appPush(push.id),
    );
    await eventually(async () => rerun.isCompleted());
    expect(c.fakes.pushes.get(gina)).toHaveLength(1);
    expect((await c.dexDb.appPush.findUniqueOrThrow({ where: { id: push.id } })).attempts).toBe(1);

    // And a registration run twice leaves the instance registered.
    const reg = await c.gw.dexRegistration.enqueue({ address: ADMIN }, jobIds.registration(ADMIN));
    await eventually(async () => reg.isCompleted());
    expect(await dexState(ADMIN)).toBe('registered');
  });
});
