// What /readyz checks for a gateway: its database (answers, migrated), Redis and the blob store.
import type { RedisClient } from '@pds/queue';
import { databaseChecks, type GatewayDb } from '@pds/db';
import type { ReadinessCheck } from '@pds/runtime';
import type { BlobStore } from '@pds/storage';

export function gatewayReadiness(deps: { db: GatewayDb; redis: RedisClient; blobStore: BlobStore }): Record<string, ReadinessCheck> {
  return {
    ...databaseChecks('gateway', deps.db),
    redis: async () => {
      await deps.redis.ping();
    },
    // A missing object answers null; an unreachable store or bucket throws.
    'blob store': async () => {
      await deps.blobStore.stat('readyz/probe');
    },
  };
}
