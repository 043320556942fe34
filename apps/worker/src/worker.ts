// Runs the BullMQ processors of gateway and dex until `close()`.
import { Worker, type Job, type Processor } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '@pds/config';
import { AppRecordRepository, createDexDb, createGatewayDb, DexKeyRepository, FileRepository, GatewayDexStateRepository, RegisteredInstanceRepository } from '@pds/db';
import { createLogger, type Logger } from '@pds/http';
import { appPushProducer, blockingRedis, dexRegistrationProducer, QUEUE_NAMES, scheduleUploadSweep, WORKER_OPTIONS, type QueueName } from '@pds/queue';
import { createBlobStore, LocalBlobStore, objectKey, removeOrphans, S3BlobStore, type BlobStore } from '@pds/storage';
import { openPrivateKey, signingKeys, type SigningKeys } from '@pds/tokens';
import { appPushProcessor } from './jobs/app-push';
import { dexRegistrationProcessor } from './jobs/dex-registration';
import { keyFetchProcessor } from './jobs/key-fetch';
import { uploadSweepProcessor } from './jobs/upload-sweep';
import { errorMessage } from './jobs/retry';
import { reconcile, RECONCILE_EVERY_MS } from './reconcile';

/** How often abandoned uploads are looked for (they are removed once older than UPLOAD_DEADLINE). */
export const UPLOAD_SWEEP_EVERY_MS = 5 * 60 * 1000;

export interface RunningWorker {
  close(): Promise<void>;
}

export async function startWorker(config: Config): Promise<RunningWorker> {
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is not set (pnpm start provides one)');
  if (!config.DEX_DATABASE_URL) throw new Error('DEX_DATABASE_URL is not set (pnpm start provides one)');
  if (!config.REDIS_URL) throw new Error('REDIS_URL is not set (pnpm start provides one)');
  const masterKey = config.MASTER_KEY;
  if (!masterKey) throw new Error('MASTER_KEY is not set: app pushes are signed with dex\'s sealed key');
  const store = await createBlobStore(config);
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'worker' });
  const gatewayDb = createGatewayDb(config.DATABASE_URL, { max: 3 });
  const dexDb = createDexDb(config.DEX_DATABASE_URL, { max: 3 });
  // BullMQ workers block on Redis: maxRetriesPerRequest must be null.
  const redis = blockingRedis(config.REDIS_URL);
  const queue = { connection: redis, prefix: config.QUEUE_PREFIX };
  const clock = () => new Date();

  const states = new GatewayDexStateRepository(gatewayDb);
  const files = new FileRepository(gatewayDb);
  const apps = new AppRecordRepository(dexDb);
  const dexKeys = new DexKeyRepository(dexDb);
  let keys: SigningKeys | undefined;
  const loadKeys = async () => {
    if (keys) return keys;
    const stored = await dexKeys.get();
    if (!stored) throw new Error('dex has not created its signing key yet (start dex first)');
    return (keys = signingKeys(stored.keyId, openPrivateKey(stored.privateKeyEnc, masterKey)));
  };

  const workers = [
    run(QUEUE_NAMES.dexRegistration, dexRegistrationProcessor({ dexUrl: config.DEX_URL, states }), config, redis, logger),
    run(QUEUE_NAMES.keyFetch, keyFetchProcessor({ gateways: config.CLUSTER_GATEWAYS, instances: new RegisteredInstanceRepository(dexDb) }), config, redis, logger),
    run(QUEUE_NAMES.appPush, appPushProcessor({ gateways: config.CLUSTER_GATEWAYS, apps, keys: loadKeys, clock }), config, redis, logger),
    run(
      QUEUE_NAMES.uploadSweep,
      uploadSweepProcessor({ files, store, objectKey, clock, uploadDeadline: config.UPLOAD_DEADLINE, leftovers: () => removeLeftovers(store, files, clock, config.SIGNED_URL_TTL) }),
      config,
      redis,
      logger,
    ),
  ];
  const registration = dexRegistrationProducer(queue);
  const appPush = appPushProducer(queue);

  const instances = new RegisteredInstanceRepository(dexDb);
  const reconcileOnce = () => reconcile({ states, registration, apps, appPush, instances, clock }, logger);
  let reconciler: NodeJS.Timeout | undefined;
  const close = async () => {
    clearInterval(reconciler);
    await Promise.all(workers.map((w) => w.close()));
    await registration.close();
    await appPush.close();
    redis.disconnect();
    await Promise.all([gatewayDb.$disconnect(), dexDb.$disconnect()]);
  };
  try {
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    await scheduleUploadSweep(queue, UPLOAD_SWEEP_EVERY_MS);
    await reconcileOnce();
  } catch (error) {
    await close();
    throw error;
  }
  // Work owed after an outage (a sign-up whose registration could not be queued, a push lost with
  // Redis) is queued again within one period of recovery, without a restart.
  let reconciling = false;
  reconciler = setInterval(() => {
    if (reconciling) return;
    reconciling = true;
    void reconcileOnce()
      .catch((error: unknown) => logger.warn({ error: errorMessage(error) }, 'reconciliation failed; retrying next period'))
      .finally(() => (reconciling = false));
  }, RECONCILE_EVERY_MS);
  reconciler.unref();
  logger.info({ queues: workers.map((w) => w.name), prefix: config.QUEUE_PREFIX }, 'worker running');
  let closing: Promise<void> | undefined;
  return { close: () => (closing ??= close()) };
}

function run<N extends QueueName>(name: N, processor: Processor, config: Config, redis: Redis, logger: Logger): Worker {
  const worker = new Worker(name, processor, { connection: redis, prefix: config.QUEUE_PREFIX, concurrency: 5, ...WORKER_OPTIONS });
  worker.on('failed', (job: Job | undefined, error: Error) => {
    // Messages name addresses and statuses, never tokens.
    logger.warn({ queue: name, jobId: job?.id, attemptsMade: job?.attemptsMade, error: errorMessage(error) }, 'job failed');
  });
  worker.on('error', (error) => logger.error({ queue: name, error: errorMessage(error) }, 'worker error'));
  return worker;
}

/**
 * The local store's partial temp files; on S3, objects no live file points to, once older than a signed
 * address lives (an upload may still be landing until then), with a minute's margin for clock skew.
 */
async function removeLeftovers(store: BlobStore, files: FileRepository, clock: () => Date, signedUrlTtl: number): Promise<number> {
  if (store instanceof LocalBlobStore) return store.removeStaleTemp();
  if (store instanceof S3BlobStore) {
    const olderThan = new Date(clock().getTime() - (signedUrlTtl + 60) * 1000);
    return removeOrphans(store, (keys) => files.liveFiles(keys), olderThan);
  }
  return 0;
}
