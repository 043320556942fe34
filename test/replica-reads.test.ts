// Read replicas (issue 23): with DATABASE_REPLICA_URL set, searches, listings and bundles are read from a
// real streaming replica (pg_basebackup -R of a private primary), and an instance's own reads right after
// its write still see it, on any gateway of the cluster, while the replica's replay is paused.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import request from 'supertest';
import { loadConfigFor } from '@pds/config';
import { createGatewayDb, type GatewayDb } from '@pds/db';
import { createApp, type Gateway } from '@pds/gateway';
import { dexRegistrationProducer } from '@pds/queue';
import { createLogger } from '@pds/runtime';
import { createBlobStore } from '@pds/storage';
import { migrate } from '../scripts/lib/prisma';
import { CLUSTER, requireEnv, signUp, type SignedUp } from './support/gateway';
import { PostgresReplica, PrivatePostgres } from './support/private-services';

jest.setTimeout(60_000);

const available = PrivatePostgres.available();
if (!available) process.stdout.write('\nreplica read tests skipped: PostgreSQL 15 server binaries or the postgres user are missing\n');

const WINDOW_SECONDS = 1;
const FILES = '/api/v2.6/files';

(available ? describe : describe.skip)('lag-tolerant reads on a streaming replica', () => {
  let primary: PrivatePostgres;
  let replica: PostgresReplica;
  let direct: pg.Client;
  const closers: Array<() => Promise<void>> = [];
  // Two gateways of one cluster: same databases, same Redis and prefix.
  let a: Gateway;
  let b: Gateway;
  let alice: SignedUp;

  async function gateway(redisPrefix: string, masterKey: Buffer): Promise<Gateway> {
    const config = loadConfigFor('gateway', {
      LOG_LEVEL: 'silent',
      CLUSTER_DOMAIN: CLUSTER,
      PUBLIC_URL_SCHEME: 'http',
      DATABASE_URL: primary.url('pds'),
      DATABASE_REPLICA_URL: replica.url('pds'),
      DATABASE_REPLICA_WINDOW: String(WINDOW_SECONDS),
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      MASTER_KEY: masterKey.toString('hex'),
      DATA_DIR: `/tmp/pds-test-data/${randomBytes(6).toString('hex')}`,
      TRUST_PROXY: 'false',
    });
    const db: GatewayDb = createGatewayDb(config.DATABASE_URL, { max: 3, replicaUrl: config.DATABASE_REPLICA_URL });
    const redis = new Redis(requireEnv('TEST_REDIS_URL'), { maxRetriesPerRequest: 2 });
    const dexRegistration = dexRegistrationProducer({ connection: redis, prefix: redisPrefix });
    closers.push(async () => {
      await dexRegistration.queue.obliterate({ force: true }).catch(() => undefined);
      await dexRegistration.close();
      redis.disconnect();
      await db.$disconnect();
    });
    return createApp({
      config,
      db,
      redis,
      logger: createLogger({ level: 'silent' }),
      masterKey,
      dexRegistration,
      blobStore: await createBlobStore(config),
      redisPrefix,
    });
  }

  beforeAll(async () => {
    primary = await PrivatePostgres.start();
    await primary.queryOne('CREATE DATABASE pds');
    await migrate('gateway', primary.url('pds'));
    replica = await PostgresReplica.of(primary, 'replica_reads');
    direct = new pg.Client({ connectionString: primary.url('pds') });
    await direct.connect();
    const prefix = `test-${randomBytes(6).toString('hex')}`;
    const masterKey = randomBytes(32);
    a = await gateway(prefix, masterKey);
    b = await gateway(prefix, masterKey);
    alice = await signUp(a.app, 'alice');
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await direct?.end();
    await replica?.destroy();
    await primary?.destroy();
  });
  afterEach(async () => {
    await replica.resumeReplay();
  });

  const as = (gw: Gateway) => ({
    post: (path: string, body: object) => request(gw.app).post(path).set('Host', alice.address).set('X-Auth-Token', alice.token).send(body),
    get: (path: string) => request(gw.app).get(path).set('Host', alice.address).set('X-Auth-Token', alice.token),
  });
  const names = async (gw: Gateway, source: string): Promise<string[]> => {
    const res = await as(gw).post(`${FILES}/search`, { source });
    expect(res.status).toBe(200);
    return (res.body as { name: string }[]).map((file) => file.name).sort();
  };
  const listed = async (gw: Gateway): Promise<string[]> => {
    const res = await as(gw).get(`${FILES}/listing?status=New`);
    expect(res.status).toBe(200);
    return (res.body.files as { name: string }[]).map((file) => file.name).sort();
  };
  const upload = async (gw: Gateway, name: string, source: string) => {
    const res = await as(gw).post(`${FILES}/upload`, { name, source });
    expect(res.status).toBe(200);
  };
  const outsideWindow = () => new Promise((resolve) => setTimeout(resolve, WINDOW_SECONDS * 1000 + 200));

  it('serves searches from the replica: a change the replica has not replayed is not seen', async () => {
    await upload(a, 'seen.txt', 'stale');
    await outsideWindow();
    await replica.caughtUp();
    expect(await names(a, 'stale')).toEqual(['seen.txt']);

    await replica.pauseReplay();
    // Written behind the gateway's back (no read-your-writes mark): only the primary has it.
    await direct.query(`UPDATE "File" SET "name" = 'renamed.txt' WHERE "source" = 'stale'`);
    await replica.caughtUp('receive');
    expect(await names(a, 'stale')).toEqual(['seen.txt']);
    expect(await names(b, 'stale')).toEqual(['seen.txt']);
    // The replica's own sessions show the gateway's pool connected there.
    const sessions = await replica.queryOne<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = 'pds' AND backend_type = 'client backend'`,
    );
    expect(sessions?.n).toBeGreaterThan(0);

    await replica.resumeReplay();
    await replica.caughtUp();
    expect(await names(a, 'stale')).toEqual(['renamed.txt']);
  });

  it("keeps a caller's own reads after its write on the primary, on every gateway, while replay is paused", async () => {
    await replica.pauseReplay();
    await upload(a, 'fresh.txt', 'yours');
    // Straight after the write: the search and the listing see it, on the gateway that wrote and on the other.
    expect(await names(a, 'yours')).toEqual(['fresh.txt']);
    expect(await names(b, 'yours')).toEqual(['fresh.txt']);
    expect(await listed(b)).toContain('fresh.txt');

    // Data records and a bundle over them: the same.
    await as(b).post('/api/v2.6/data/notes/today', { text: 'written while paused' }).expect(201);
    await as(a)
      .post('/api/v2.6/data-bundle/today', { name: 'today', bundle: { p: { endpoints: [{ endpoint: 'notes/today' }] } } })
      .expect(201);
    const bundle = await as(a).get('/api/v2.6/data-bundle/today');
    expect(bundle.status).toBe(200);
    expect((bundle.body.p as { data: { text: string } }[]).map((r) => r.data.text)).toEqual(['written while paused']);

    // Once the window has passed the reads go back to the replica, which has still not replayed the write.
    await outsideWindow();
    expect(await names(a, 'yours')).toEqual([]);
    expect((await as(a).get('/api/v2.6/data-bundle/today')).body.p).toEqual([]);

    await replica.resumeReplay();
    await replica.caughtUp();
    expect(await names(b, 'yours')).toEqual(['fresh.txt']);
  });
});
