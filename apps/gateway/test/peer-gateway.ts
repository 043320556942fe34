// A second gateway of a test gateway's cluster: the same database and Redis channel, caches of its own,
// for "every gateway refuses from its next request". Its connections close through `closers`.
import type { RequestListener } from 'node:http';
import { Redis } from 'ioredis';
import { createGatewayDb } from '@pds/db';
import { createLogger } from '@pds/runtime';
import { createApp } from '@pds/gateway';
import { requireEnv, type TestGateway } from '../../../test/support/gateway';

export function peerGateway(gw: TestGateway, closers: (() => Promise<void>)[]): RequestListener {
  const db = createGatewayDb(gw.databaseUrl, { max: 2 });
  const redis = new Redis(requireEnv('TEST_REDIS_URL'), { maxRetriesPerRequest: 2 });
  const subscriber = redis.duplicate();
  closers.push(async () => {
    subscriber.disconnect();
    redis.disconnect();
    await db.$disconnect();
  });
  return createApp({
    config: gw.config,
    db,
    redis,
    subscriber,
    logger: createLogger({ level: 'silent' }),
    masterKey: gw.config.MASTER_KEY as Buffer,
    dexRegistration: gw.dexRegistration,
    clock: gw.clock,
    redisPrefix: gw.redisPrefix,
    blobStore: gw.blobStore,
  }).app;
}
