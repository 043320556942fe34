// Wires real dependencies from the configuration and serves the gateway until `close()`.
import type { Server } from 'node:http';
import { Redis } from 'ioredis';
import type { Config } from '@pds/config';
import { createGatewayDb } from '@pds/db';
import { createLogger, flushLogs } from '@pds/http';
import { dexRegistrationProducer } from '@pds/queue';
import { createBlobStore } from '@pds/storage';
import { createApp, type Gateway } from './app';

export interface RunningGateway {
  gateway: Gateway;
  server: Server;
  url: string;
  close(): Promise<void>;
}

export async function startGateway(config: Config): Promise<RunningGateway> {
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is not set (pnpm start provides one)');
  if (!config.REDIS_URL) throw new Error('REDIS_URL is not set (pnpm start provides one)');
  if (!config.MASTER_KEY) throw new Error('MASTER_KEY is not set (pnpm start provides one)');
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'gateway' });
  const db = createGatewayDb(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE });
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2, lazyConnect: false });
  const dexRegistration = dexRegistrationProducer({ connection: redis, prefix: config.QUEUE_PREFIX });
  const blobStore = await createBlobStore(config);
  const gateway = createApp({ config, db, redis, logger, masterKey: config.MASTER_KEY, dexRegistration, blobStore });

  const server = await new Promise<Server>((resolve, reject) => {
    const s = gateway.app.listen(config.PORT, config.BIND_ADDRESS, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const url = `http://${config.BIND_ADDRESS}:${port}`;
  logger.info({ url, cluster: config.CLUSTER_DOMAIN }, 'gateway listening');

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dexRegistration.close();
      redis.disconnect();
      await db.$disconnect();
      await flushLogs();
    })());
  return { gateway, server, url, close };
}
