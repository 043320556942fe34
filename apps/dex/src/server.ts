// Wires dex's real dependencies from the configuration and serves it until `close()`.
import type { RequestListener } from 'node:http';
import type { DexConfig } from '@pds/config';
import {
  AdminRepository,
  AppRecordRepository,
  CertifiedClusterRepository,
  createDexDb,
  databaseChecks,
  DexKeyRepository,
  disconnectOnFailure,
  poolUse,
} from '@pds/db';
import { ENVELOPED } from '@pds/http';
import { boundPort, closeServer, createLogger, listen, once, requireReady, startMetrics, type Stoppable } from '@pds/runtime';
import {
  announcePresence,
  appPushProducer,
  blockingRedis,
  endConnection,
  keyFetchProducer,
  QUEUE_NAMES,
  queueEvents,
  redisTarget,
  requestRedis,
} from '@pds/queue';
import { consoleDist } from '@pds/console';
import { createDexApp } from './app';
import type { DexRoute } from './route';
import { loadOrCreateDexKeys } from './keys';

export interface RunningDex extends Stoppable {
  url: string;
  app: RequestListener;
  /** Its route table, for tests that walk every route. */
  routes: readonly DexRoute[];
}

export async function startDex(config: DexConfig, options: { registerWaitMs?: number } = {}): Promise<RunningDex> {
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'dex' });
  const db = createDexDb(config.DEX_DATABASE_URL, { max: config.DATABASE_POOL_SIZE });
  await disconnectOnFailure(db, requireReady('dex', databaseChecks('dex', db)));
  // Requests enqueue and count on a fail-fast connection, so registerHat answers 503 at once while Redis
  // is down; QueueEvents blocks on Redis by design and gets a connection that waits (it duplicates this one).
  const redis = requestRedis(redisTarget(config));
  const blocking = blockingRedis(redisTarget(config));
  const queue = { connection: redis, prefix: config.QUEUE_PREFIX };
  const keyFetch = keyFetchProducer(queue);
  const appPush = appPushProducer(queue);
  const keyFetchEvents = queueEvents(QUEUE_NAMES.keyFetch, { connection: blocking, prefix: config.QUEUE_PREFIX });

  let metrics: Awaited<ReturnType<typeof startMetrics>>;
  let closeApp: (() => Promise<void>) | undefined;
  const release = async () => {
    await closeApp?.();
    await metrics?.close();
    // The connections end before the queues close (endConnection says why).
    await Promise.all([endConnection(redis), endConnection(blocking)]);
    await keyFetchEvents.close();
    await keyFetch.close();
    await appPush.close();
    await db.$disconnect();
    logger.flush();
  };

  let server;
  let app: RequestListener;
  let routes: readonly DexRoute[];
  try {
    // The configured trust roots are seeded on every start; the CLI adds more (and nothing removes these).
    await new CertifiedClusterRepository(db).ensure(config.DEX_CLUSTERS);
    await new AdminRepository(db).ensure(config.DEX_ADMINS);
    const keys = await loadOrCreateDexKeys(new DexKeyRepository(db), config.MASTER_KEY);
    metrics = await startMetrics('dex', config);
    metrics?.metrics.pool(() => poolUse(db));
    const pushes = new AppRecordRepository(db);
    metrics?.metrics.gauge(
      'pds_app_pushes',
      'App pushes to instances by state: queued, sending, retrying (failed, backing off), delivered, failed (given up)',
      ['state'],
      async () => Object.entries(await pushes.countByState()).map(([state, n]) => [{ state }, n]),
    );
    ({
      app,
      routes,
      close: closeApp,
    } = createDexApp({
      config,
      db,
      redis,
      logger,
      keys,
      keyFetch,
      keyFetchEvents,
      appPush,
      metrics: metrics?.metrics,
      registerWaitMs: options.registerWaitMs,
      consoleDist: consoleDist(),
    }));
    server = await listen(app, config.DEX_PORT, config.BIND_ADDRESS, ENVELOPED);
  } catch (error) {
    await release();
    throw error;
  }
  const url = `http://${config.BIND_ADDRESS}:${boundPort(server)}`;
  logger.info({ url, clusters: config.DEX_CLUSTERS, admins: config.DEX_ADMINS }, 'dex listening');

  const leave = announcePresence(redis, config.QUEUE_PREFIX, { kind: 'dex' });
  const running = server;
  const close = once(async () => {
    await leave();
    await closeServer(running, config.SHUTDOWN_TIMEOUT * 1000);
    await release();
  });
  return { url, app, routes, close, graceMs: config.SHUTDOWN_TIMEOUT * 1000 };
}
