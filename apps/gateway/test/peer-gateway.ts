// A second gateway of a test gateway's cluster: the same database, Redis and store, caches and
// connections of its own, for "every gateway refuses from its next request" and for events that cross
// gateways.
import type { RequestListener } from 'node:http';
import { Redis } from 'ioredis';
import { createGatewayDb } from '@pds/db';
import { createLogger } from '@pds/runtime';
import { createApp, type Gateway, type GatewayDeps } from '@pds/gateway';
import { requireEnv, type TestGateway } from '../../../test/support/gateway';

export interface Peer {
  gateway: Gateway;
  /** Its connection for cache invalidation; absent for a peer made without one (`subscribed: false`). */
  subscriber?: Redis;
  /** Ends its event streams, then the gateway and its connections. */
  close(): Promise<void>;
}

/**
 * A peer of `gw`; `extra` adds or replaces what it is made with (the dex key, say). `subscribed: false`
 * makes one that hears no cache invalidation.
 */
export function startPeer(gw: TestGateway, extra: Partial<GatewayDeps> = {}, { subscribed = true } = {}): Peer {
  const db = createGatewayDb(gw.databaseUrl, { max: 3 });
  const redis = new Redis(requireEnv('TEST_REDIS_URL'), { maxRetriesPerRequest: 2 });
  const subscriber = subscribed ? redis.duplicate() : undefined;
  const gateway = createApp({
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
    ...extra,
  });
  return {
    gateway,
    subscriber,
    close: async () => {
      gateway.endStreams();
      await gateway.close();
      subscriber?.disconnect();
      redis.disconnect();
      await db.$disconnect();
    },
  };
}

/** A peer's request handler; its close joins `closers`. */
export function peerGateway(gw: TestGateway, closers: (() => Promise<void>)[]): RequestListener {
  const peer = startPeer(gw);
  closers.push(() => peer.close());
  return peer.gateway.app;
}
