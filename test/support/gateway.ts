// A real gateway for a test file: its own database copied from the migrated template, the shared
// Redis under a private key prefix, a movable clock. Call `close()` in afterAll.
import { randomBytes } from 'node:crypto';
import type { RequestListener } from 'node:http';
import { Redis } from 'ioredis';
import request from 'supertest';
import { loadConfigFor, type Env, type GatewayConfig } from '@pds/config';
import { createLogger } from '@pds/runtime';
import { dexRegistrationProducer, mailProducer, portabilityProducers, thumbnailProducer, type Producer } from '@pds/queue';
import { createApp, type Gateway, type GatewayDeps } from '@pds/gateway';
// The root package does not depend on @pds/storage; the gateway resolves it as a workspace package.
import { createBlobStore, type BlobStore } from '../../packages/storage/src';
import { testClock, type TestClock } from './clock';
import { testGatewayDb, type TestGatewayDb } from './database';
import { createDatabaseFrom } from './templates';

export const CLUSTER = 'pds.test';
export const STRONG_PASSWORD = 'correct-horse-battery-staple-42';

export interface TestGateway extends Gateway {
  config: GatewayConfig;
  /** The product's database, with Prisma's models for assertions (test/support/database.ts). */
  db: TestGatewayDb;
  redis: Redis;
  clock: TestClock;
  redisPrefix: string;
  dexRegistration: Producer<'dex-registration'>;
  /** Where completed images ask for thumbnails; a test that wants them runs the job over `redisPrefix`. */
  thumbnails: Producer<'thumbnail'>;
  /** Where mail jobs go; a test that wants them sent runs the job over `redisPrefix` (test/support/mailbox.ts). */
  mailQueue: Producer<'mail'>;
  /** Where exports and imports ask for their jobs; a test that wants them runs the jobs over `redisPrefix`. */
  portability: ReturnType<typeof portabilityProducers>;
  databaseUrl: string;
  /** The store the gateway uses (STORAGE=local by default), for checking bytes directly. */
  blobStore: BlobStore;
  close(): Promise<void>;
}

export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through jest (test/global-setup.ts)`);
  return value;
}

/**
 * Dependencies a test may replace (e.g. `dexKeys`: a source holding a key pair the test generated;
 * `logger`: one writing where the test reads its lines).
 */
export type TestGatewayDeps = Partial<Pick<GatewayDeps, 'dexKeys' | 'logger'>>;

export async function startTestGateway(
  overrides: Partial<Record<keyof Env, string>> = {},
  deps: TestGatewayDeps = {},
): Promise<TestGateway> {
  const database = await createDatabaseFrom(requireEnv('TEST_PG_ADMIN_URL'), requireEnv('TEST_GATEWAY_TEMPLATE'));
  const config = loadConfigFor('gateway', {
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    CLUSTER_DOMAIN: CLUSTER,
    PUBLIC_URL_SCHEME: 'http',
    DATABASE_URL: database.url,
    REDIS_URL: requireEnv('TEST_REDIS_URL'),
    MASTER_KEY: randomBytes(32).toString('hex'),
    DATA_DIR: `/tmp/pds-test-data/${randomBytes(6).toString('hex')}`,
    // Tests log in far more often than people; the limit itself is tested with the contract's value.
    LOGIN_RATE_LIMIT: '1000',
    LOGIN_ACCOUNT_LIMIT: '1000',
    SIGNUP_RATE_LIMIT: '1000',
    // Tests call as clients, not through a proxy: the default believes no forwarded header.
    ...overrides,
  });
  const db = testGatewayDb(database.url, { max: 5 });
  const redis = new Redis(requireEnv('TEST_REDIS_URL'), { maxRetriesPerRequest: 2 });
  const subscriber = redis.duplicate();
  const redisPrefix = `test-${randomBytes(6).toString('hex')}`;
  const dexRegistration = dexRegistrationProducer({ connection: redis, prefix: redisPrefix });
  const thumbnails = thumbnailProducer({ connection: redis, prefix: redisPrefix });
  const mailQueue = mailProducer({ connection: redis, prefix: redisPrefix });
  const portability = portabilityProducers({ connection: redis, prefix: redisPrefix });
  const clock = testClock();
  const blobStore = await createBlobStore(config);
  const gateway = createApp({
    config,
    db,
    redis,
    subscriber,
    logger: deps.logger ?? createLogger({ level: config.LOG_LEVEL }),
    masterKey: config.MASTER_KEY,
    dexRegistration,
    thumbnails,
    mail: mailQueue,
    portability,
    clock,
    redisPrefix,
    blobStore,
    ...deps,
  });
  return {
    ...gateway,
    config,
    db,
    redis,
    clock,
    redisPrefix,
    dexRegistration,
    thumbnails,
    mailQueue,
    portability,
    databaseUrl: database.url,
    blobStore,
    close: async () => {
      await gateway.close();
      await dexRegistration.queue.obliterate({ force: true }).catch(() => undefined);
      await dexRegistration.close();
      await thumbnails.queue.obliterate({ force: true }).catch(() => undefined);
      await thumbnails.close();
      await mailQueue.queue.obliterate({ force: true }).catch(() => undefined);
      await mailQueue.close();
      for (const producer of [portability.exports, portability.imports]) {
        await producer.queue.obliterate({ force: true }).catch(() => undefined);
        await producer.close();
      }
      subscriber.disconnect();
      redis.disconnect();
      await db.$disconnect();
      await database.drop();
    },
  };
}

export function addressOf(username: string): string {
  return `${username}.${CLUSTER}`;
}

export interface SignedUp {
  address: string;
  userId: string;
  token: string;
  username: string;
  password: string;
}

/** Signs up an instance through the API and returns its owner's credentials. */
export async function signUp(app: RequestListener, username: string, password = STRONG_PASSWORD): Promise<SignedUp> {
  const res = await request(app)
    .post('/api/signup')
    .set('Host', CLUSTER)
    .send({ fullName: `${username} Example`, username, email: `${username}@example.com`, pass: password, passRepeat: password });
  if (res.status !== 201) throw new Error(`sign-up of ${username} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { address: res.body.instance, userId: res.body.userId, token: res.body.accessToken, username, password };
}

/** Creates a plain user in an instance (as its owner) and logs it in. */
export async function addUser(app: RequestListener, owner: SignedUp, username: string, password = STRONG_PASSWORD) {
  const created = await request(app)
    .post('/users/user')
    .set('Host', owner.address)
    .set('X-Auth-Token', owner.token)
    .send({ username, password });
  if (created.status !== 201) throw new Error(`creating ${username} failed: ${created.status} ${JSON.stringify(created.body)}`);
  const login = await request(app)
    .get('/users/access_token')
    .set('Host', owner.address)
    .set('username', username)
    .set('password', password);
  if (login.status !== 200) throw new Error(`login of ${username} failed: ${login.status}`);
  return { userId: created.body.userId as string, token: login.body.accessToken as string, username, password };
}

/** Requests to `host` as `who` (their token in X-Auth-Token). */
export function callerRequests(app: RequestListener, who: { token: string }, host: string) {
  const send = (method: 'get' | 'post' | 'put' | 'delete') => (path: string) =>
    request(app)[method](path).set('Host', host).set('X-Auth-Token', who.token);
  return { get: send('get'), post: send('post'), put: send('put'), delete: send('delete') };
}
