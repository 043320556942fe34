// Wires dex's real dependencies from the configuration and serves it until `close()`.
import type { Server } from 'node:http';
import type { Express } from 'express';
import type { Config } from '@pds/config';
import { AdminRepository, CertifiedClusterRepository, createDexDb, DexKeyRepository } from '@pds/db';
import { answerClientErrors, createLogger } from '@pds/http';
import { appPushProducer, blockingRedis, keyFetchProducer, QUEUE_NAMES, queueEvents, requestRedis } from '@pds/queue';
import { createDexApp } from './app';
import { loadOrCreateDexKeys } from './keys';

export interface RunningDex {
  url: string;
  app: Express;
  close(): Promise<void>;
}

export async function startDex(config: Config, options: { registerWaitMs?: number } = {}): Promise<RunningDex> {
  if (!config.DEX_DATABASE_URL) throw new Error('DEX_DATABASE_URL is not set (pnpm start provides one)');
  if (!config.REDIS_URL) throw new Error('REDIS_URL is not set (pnpm start provides one)');
  if (!config.MASTER_KEY) throw new Error('MASTER_KEY is not set: it seals dex\'s private key (pnpm start provides one)');
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'dex' });
  const db = createDexDb(config.DEX_DATABASE_URL, { max: config.DATABASE_POOL_SIZE });
  // Requests enqueue and count on a fail-fast connection, so registerHat answers 503 at once while Redis
  // is down; QueueEvents blocks on Redis by design and gets a connection that waits (it duplicates this one).
  const redis = requestRedis(config.REDIS_URL);
  const blocking = blockingRedis(config.REDIS_URL);
  const queue = { connection: redis, prefix: config.QUEUE_PREFIX };
  const keyFetch = keyFetchProducer(queue);
  const appPush = appPushProducer(queue);
  const keyFetchEvents = queueEvents(QUEUE_NAMES.keyFetch, { connection: blocking, prefix: config.QUEUE_PREFIX });

  const shutdown = async () => {
    await keyFetchEvents.close();
    await keyFetch.close();
    await appPush.close();
    redis.disconnect();
    blocking.disconnect();
    await db.$disconnect();
  };

  let server: Server;
  let app: Express;
  try {
    // The configured trust roots are seeded on every start; the CLI adds more (and nothing removes these).
    await new CertifiedClusterRepository(db).ensure(config.DEX_CLUSTERS);
    await new AdminRepository(db).ensure(config.DEX_ADMINS);
    const keys = await loadOrCreateDexKeys(new DexKeyRepository(db), config.MASTER_KEY);
    ({ app } = createDexApp({ config, db, logger, redis, keys, keyFetch, keyFetchEvents, appPush, registerWaitMs: options.registerWaitMs }));
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(config.DEX_PORT, config.BIND_ADDRESS, () => resolve(s));
      s.once('error', reject);
    });
    answerClientErrors(server);
  } catch (error) {
    await shutdown();
    throw error;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.DEX_PORT;
  const url = `http://${config.BIND_ADDRESS}:${port}`;
  logger.info({ url, clusters: config.DEX_CLUSTERS, admins: config.DEX_ADMINS }, 'dex listening');

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await shutdown();
    })());
  return { url, app, close };
}
