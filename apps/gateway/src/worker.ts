// Runs the gateway's jobs (dex registration, upload sweep) until `close()`. It holds the gateway
// database and blob store only: dex's database and key belong to dex's worker.
import { Redis } from 'ioredis';
import type { Config } from '@pds/config';
import { createGatewayDb, FileRepository, GatewayDexStateRepository } from '@pds/db';
import { createLogger } from '@pds/http';
import { dexRegistrationProducer, QUEUE_NAMES, runQueue, scheduleUploadSweep } from '@pds/queue';
import { createBlobStore, objectKey } from '@pds/storage';
import { dexRegistrationProcessor } from './jobs/dex-registration';
import { requeuePendingRegistrations } from './jobs/reconcile';
import { uploadSweepProcessor } from './jobs/upload-sweep';

/** How often abandoned uploads are looked for (they are removed once older than UPLOAD_DEADLINE). */
export const UPLOAD_SWEEP_EVERY_MS = 5 * 60 * 1000;

export interface RunningWorker {
  close(): Promise<void>;
}

export async function startGatewayWorker(config: Config): Promise<RunningWorker> {
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is not set (pnpm start provides one)');
  if (!config.REDIS_URL) throw new Error('REDIS_URL is not set (pnpm start provides one)');
  const store = await createBlobStore(config);
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'gateway-worker' });
  const db = createGatewayDb(config.DATABASE_URL, { max: 3 });
  // BullMQ workers block on Redis: maxRetriesPerRequest must be null.
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
  const queue = { connection: redis, prefix: config.QUEUE_PREFIX };
  const states = new GatewayDexStateRepository(db);

  const workers = [
    runQueue(QUEUE_NAMES.dexRegistration, dexRegistrationProcessor({ dexUrl: config.DEX_URL, states }), queue, logger),
    runQueue(
      QUEUE_NAMES.uploadSweep,
      uploadSweepProcessor({ files: new FileRepository(db), store, objectKey, clock: () => new Date(), uploadDeadline: config.UPLOAD_DEADLINE }),
      queue,
      logger,
    ),
  ];
  const registration = dexRegistrationProducer(queue);

  const close = async () => {
    await Promise.all(workers.map((w) => w.close()));
    await registration.close();
    redis.disconnect();
    await db.$disconnect();
  };
  try {
    await Promise.all(workers.map((w) => w.waitUntilReady()));
    await scheduleUploadSweep(queue, UPLOAD_SWEEP_EVERY_MS);
    await requeuePendingRegistrations(states, registration, logger);
  } catch (error) {
    await close();
    throw error;
  }
  logger.info({ queues: workers.map((w) => w.name), prefix: config.QUEUE_PREFIX }, 'gateway worker running');
  let closing: Promise<void> | undefined;
  return { close: () => (closing ??= close()) };
}
