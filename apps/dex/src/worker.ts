// Runs dex's jobs (key fetch, app push) until `close()`. It holds dex's database and key only: the
// gateway's database belongs to the gateway's worker.
import type { DexWorkerConfig } from '@pds/config';
import {
  AppRecordRepository,
  createDexDb,
  databaseChecks,
  disconnectOnFailure,
  DexKeyRepository,
  poolUse,
  RegisteredInstanceRepository,
} from '@pds/db';
import { createLogger, once, requireReady, startMetrics, type Stoppable } from '@pds/runtime';
import {
  announcePresence,
  appPushProducer,
  DEX_QUEUES,
  blockingRedis,
  keyFetchProducer,
  QUEUE_NAMES,
  reconcileEvery,
  redisTarget,
  runQueue,
  startJobProcess,
} from '@pds/queue';
import { openPrivateKey, signingKeys, type SigningKeys } from '@pds/tokens';
import { appPushProcessor } from './jobs/app-push';
import { keyFetchProcessor } from './jobs/key-fetch';
import { reconcileDex } from './jobs/reconcile';

export async function startDexWorker(config: DexWorkerConfig): Promise<Stoppable> {
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'dex-worker' });
  const db = createDexDb(config.DEX_DATABASE_URL, { max: 3 });
  await disconnectOnFailure(db, requireReady('dex worker', databaseChecks('dex', db)));
  // BullMQ workers block on Redis: maxRetriesPerRequest must be null.
  const redis = blockingRedis(redisTarget(config));
  const queue = { connection: redis, prefix: config.QUEUE_PREFIX };
  const apps = new AppRecordRepository(db);
  const instances = new RegisteredInstanceRepository(db);
  const dexKeys = new DexKeyRepository(db);
  let keys: SigningKeys | undefined;
  const loadKeys = async () => {
    if (keys) return keys;
    const stored = await dexKeys.get();
    if (!stored) throw new Error('dex has not created its signing key yet (start dex first)');
    return (keys = signingKeys(stored.keyId, openPrivateKey(stored.privateKeyEnc, config.MASTER_KEY)));
  };

  const workers = [
    runQueue(QUEUE_NAMES.keyFetch, keyFetchProcessor({ gateways: config.CLUSTER_GATEWAYS, instances }), queue, logger),
    runQueue(
      QUEUE_NAMES.appPush,
      appPushProcessor({ gateways: config.CLUSTER_GATEWAYS, apps, keys: loadKeys, clock: () => new Date() }),
      queue,
      logger,
    ),
  ];
  const appPush = appPushProducer(queue);
  // Only for the depth metrics: dex itself queues key fetches.
  const keyFetch = keyFetchProducer(queue);
  const reconcile = () => reconcileDex({ apps, appPush, instances, clock: () => new Date() }, logger);

  const graceMs = config.SHUTDOWN_TIMEOUT * 1000;
  const close = await startJobProcess({
    name: 'dex worker',
    logger,
    workers,
    producers: [appPush, keyFetch],
    connection: redis,
    prefix: config.QUEUE_PREFIX,
    graceMs,
    begin: async () => {
      await reconcile();
      const metrics = await startMetrics('dex-worker', config);
      metrics?.metrics.queues([keyFetch.queue, appPush.queue]);
      metrics?.metrics.pool(() => poolUse(db));
      const stopReconciling = reconcileEvery(reconcile, logger);
      const leave = announcePresence(redis, config.QUEUE_PREFIX, { kind: 'dex-worker', queues: [...DEX_QUEUES] });
      return async () => {
        await leave();
        stopReconciling();
        await metrics?.close();
      };
    },
    release: () => db.$disconnect(),
  });
  return { close: once(close), graceMs };
}
