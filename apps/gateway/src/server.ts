// Wires real dependencies from the configuration and serves the gateway until `close()`.
import type { Server } from 'node:http';
import type { GatewayConfig } from '@pds/config';
import { createGatewayDb, databaseChecks, disconnectOnFailure, poolUse } from '@pds/db';
import { ENVELOPED } from '@pds/http';
import { boundPort, closeServer, createLogger, flushLogs, listen, once, requireReady, startMetrics, type Stoppable } from '@pds/runtime';
import {
  announcePresence,
  dexRegistrationProducer,
  endConnection,
  mailProducer,
  portabilityProducers,
  redisTarget,
  requestRedis,
  thumbnailProducer,
} from '@pds/queue';
import { createBlobStore } from '@pds/storage';
import { createApp, type Gateway } from './app';

export interface RunningGateway extends Stoppable {
  gateway: Gateway;
  server: Server;
  url: string;
  /** The admin API's address (ADMIN_PORT), when it listens. */
  adminUrl?: string;
}

export async function startGateway(config: GatewayConfig): Promise<RunningGateway> {
  // An admin listener without its secret would refuse everyone: say so before anything starts.
  if (config.ADMIN_PORT !== undefined && !config.ADMIN_TOKEN)
    throw new Error('ADMIN_PORT is set but ADMIN_TOKEN is not: set both, or neither');
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'gateway' });
  const db = createGatewayDb(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE, replicaUrl: config.DATABASE_REPLICA_URL });
  // A missing database or unapplied migrations would turn every request into an error: refuse to start instead.
  await disconnectOnFailure(db, requireReady('gateway', databaseChecks('gateway', db)));
  // Fail-fast: while Redis is down, calls that need it answer 503 at once and the rest do not wait.
  const redis = requestRedis(redisTarget(config));
  const dexRegistration = dexRegistrationProducer({ connection: redis, prefix: config.QUEUE_PREFIX });
  const thumbnails = thumbnailProducer({ connection: redis, prefix: config.QUEUE_PREFIX });
  const mail = mailProducer({ connection: redis, prefix: config.QUEUE_PREFIX });
  const portability = portabilityProducers({ connection: redis, prefix: config.QUEUE_PREFIX });
  // Cache invalidation between gateways (instances/invalidation.ts) needs a connection of its own.
  const subscriber = redis.duplicate();
  let metrics: Awaited<ReturnType<typeof startMetrics>>;
  const release = async () => {
    await metrics?.close();
    // The connections end before the queues close (endConnection says why).
    await Promise.all([endConnection(subscriber), endConnection(redis)]);
    await dexRegistration.close();
    await thumbnails.close();
    await mail.close();
    await portability.exports.close();
    await portability.imports.close();
    await db.$disconnect();
    await flushLogs();
  };

  let gateway: Gateway;
  let server: Server;
  let adminServer: Server | undefined;
  try {
    const blobStore = await createBlobStore(config);
    metrics = await startMetrics('gateway', config);
    metrics?.metrics.pool(() => poolUse(db));
    gateway = createApp({
      config,
      db,
      redis,
      subscriber,
      logger,
      masterKey: config.MASTER_KEY,
      dexRegistration,
      thumbnails,
      mail,
      portability,
      blobStore,
      metrics: metrics?.metrics,
    });
    // Its own listener: the public port never serves the admin API (and this one nothing else).
    if (gateway.admin && config.ADMIN_PORT !== undefined)
      adminServer = await listen(gateway.admin, config.ADMIN_PORT, config.BIND_ADDRESS, ENVELOPED);
    server = await listen(gateway.app, config.PORT, config.BIND_ADDRESS, ENVELOPED);
    // No deadline for a whole request (Node's is 5 minutes): a 4 GiB upload from a phone takes longer.
    // Headers still have Node's 60 s; a small body its own (BODY_DEADLINE_MS); an upload ends when its
    // client falls silent (UPLOAD_IDLE_MS).
    server.requestTimeout = 0;
  } catch (error) {
    if (adminServer) await closeServer(adminServer, 0);
    await release();
    throw error;
  }
  const url = `http://${config.BIND_ADDRESS}:${boundPort(server)}`;
  const adminUrl = adminServer ? `http://${config.BIND_ADDRESS}:${boundPort(adminServer)}` : undefined;
  logger.info({ url, adminUrl, cluster: config.CLUSTER_DOMAIN }, 'gateway listening');
  // Seen on the operator's cluster page while it runs.
  const leave = announcePresence(redis, config.QUEUE_PREFIX, { kind: 'gateway' });

  const close = once(async () => {
    await leave();
    const grace = config.SHUTDOWN_TIMEOUT * 1000;
    const closing = Promise.all([closeServer(server, grace), adminServer ? closeServer(adminServer, grace) : undefined]);
    // Event streams never end by themselves: ended here, the server need not wait its grace for them.
    gateway.endStreams();
    await closing;
    await gateway.close();
    await release();
  });
  return { gateway, server, url, adminUrl, close, graceMs: config.SHUTDOWN_TIMEOUT * 1000 };
}
