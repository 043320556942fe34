// Brings up what the suite needs once per run: PostgreSQL (configured, local, or embedded), Redis
// (configured, local, or a private redis-server), and the migrated template databases.
import os from 'node:os';
import path from 'node:path';
import { ensurePostgres, redact } from '../scripts/lib/postgres';
import { ensureRedis } from '../scripts/lib/redis';
import { ensureTemplate } from './support/templates';

type Stoppable = { stop(): Promise<void> };
const started = globalThis as unknown as { __pdsTestServices?: Stoppable[] };

export default async function globalSetup(): Promise<void> {
  const dataDir = process.env.TEST_DATA_DIR ?? path.join(os.tmpdir(), 'pds-test-services');
  const postgres = await ensurePostgres({ configuredUrl: process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL, dataDir });
  const redis = await ensureRedis(process.env.TEST_REDIS_URL ?? process.env.REDIS_URL);
  started.__pdsTestServices = [postgres, redis];

  process.env.TEST_PG_ADMIN_URL = postgres.adminUrl;
  process.env.TEST_REDIS_URL = redis.url;
  process.env.TEST_GATEWAY_TEMPLATE = await ensureTemplate(postgres.adminUrl, 'gateway');
  process.env.TEST_DEX_TEMPLATE = await ensureTemplate(postgres.adminUrl, 'dex');
  process.stdout.write(`\ntest services: postgres ${postgres.origin} ${redact(postgres.adminUrl)}, redis ${redis.origin} ${redis.url}\n`);
}
