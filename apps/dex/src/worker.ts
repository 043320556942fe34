// Runs dex's jobs (key fetch, app push) until `close()`. It holds dex's database and key only: the
// gateway's database belongs to the gateway's worker.
import { Redis } from 'ioredis';
import type { Config } from '@pds/config';
import { AppRecordRepository, createDexDb, DexKeyRepository, RegisteredInstanceRepository } from '@pds/db';
import { createLogger } from '@pds/http';
import { appPushProducer, QUEUE_NAMES, runQueue } from '@pds/queue';
import { openPrivateKey, signingKeys, type SigningKeys } from '@pds/tokens';
import { appPushProcessor } from './jobs/app-push';
import { keyFetchProcessor } from './jobs/key-fetch';
import { requeueUndeliveredPushes } from './jobs/reconcile';

export async function startDexWorker(config: Config): Promise<{ close(): Promise<void> }> {
  if (!config.DEX_DATABASE_URL) throw new Error('DEX_DATABASE_URL is not set (pnpm start provides one)');
  if (!config.REDIS_URL) throw new Error('REDIS_URL is not set (pnpm start provides one)');
  const masterKey = config.MASTER_KEY;
  if (!masterKey) throw new Error('MASTER_KEY is not set: app pushes are signed with dex\'s sealed key');
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'dex-worker' });
  const db = createDexDb(config.DEX_DATABASE_URL, { max: 3 });
  // BullMQ workers block on Redis: maxRetriesPerRequest must be null.
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
  const queue = { connection: redis, prefix: config.QUEUE_PREFIX };
  const apps = new AppRecordRepository(db);
  const dexKeys = new DexKeyRepository(db);
  let keys: SigningKeys | undefined;
  const loadKeys = async () => {
    if (keys) return keys;
    const stored = await dexKeys.get();
    if (!stored) throw new Error('dex has not created its signing key yet (start dex first)');
    return (keys = signingKeys(stored.keyId, openPrivateKey(stored.privateKeyEnc, masterKey)));
  };

  const workers = [
    runQueue(QUEUE_NAMES.keyFetch, keyFetchProcessor({ gateways: config.CLUSTER_GATEWAYS, instances: new RegisteredInstanceRepository(db) }), queue, logger),
    runQueue(QUEUE_NAMES.appPush, appPushProcessor({ gateways: config.CLUSTER_GATEWAYS, apps, keys: loadKeys, clock: () => new Date() }), queue, logger),
  ];
  const appPush = appPushProducer(queue);

  const close = async () => {
    await Promise.all(workers.map((w) => w.close()));
    await appPush.close();
    redis.disconnect();
    await db.$disconnect();
  };
  try {
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    await requeueUndeliveredPushes(apps, appPush, logger);
  } catch (error) {
    await close();
    throw error;
  }
  logger.info({ queues: workers.map((w) => w.name), prefix: config.QUEUE_PREFIX }, 'dex worker running');
  let closing: Promise<void> | undefined;
  return { close: () => (closing ??= close()) };
}
