// Brings up what the suite needs once per run: PostgreSQL (configured, local, or embedded), Redis
// (configured, local, or a private redis-server), S3 (configured, or a private OpenStack Swift), and the
// migrated template databases; and serves the replicated S3 servers, started only when a suite asks.
import os from 'node:os';
import path from 'node:path';
import { ensureConsoleBuilt } from '../scripts/lib/console';
import { ensurePostgres, redact } from '../scripts/lib/postgres';
import { ensureRedis } from '../scripts/lib/redis';
import { ensureS3 } from '../scripts/lib/s3';
import { citusCluster } from './support/citus';
import { serveLazyServices } from './support/lazy-services';
import { replicatedS3Starters } from './support/replicated-s3';
import { ensureTemplate } from './support/templates';

type Stoppable = { stop(): Promise<void> };
const started = globalThis as unknown as { __pdsTestServices?: Stoppable[] };

export default async function globalSetup(): Promise<void> {
  const dataDir = process.env.TEST_DATA_DIR ?? path.join(os.tmpdir(), 'pds-test-services');
  // Swift takes seconds to start: it comes up while Postgres does. Should setup fail, the Swift process
  // exits by itself when jest does (it watches its stdin).
  const s3Starting = ensureS3({
    dataDir,
    configured: {
      endpoint: process.env.TEST_S3_ENDPOINT ?? process.env.S3_ENDPOINT,
      accessKey: process.env.TEST_S3_ACCESS_KEY ?? process.env.S3_ACCESS_KEY,
      secretKey: process.env.TEST_S3_SECRET_KEY ?? process.env.S3_SECRET_KEY,
      region: process.env.TEST_S3_REGION ?? process.env.S3_REGION,
    },
  });
  s3Starting.catch(() => undefined);
  // The gateway serves the web console's build; a clean clone has none yet.
  ensureConsoleBuilt((line) => process.stdout.write(`\n${line}\n`));
  // TEST_PG_ADMIN_URL may name a Citus coordinator with its workers registered: the test databases are then distributed ones.
  const postgres = await ensurePostgres({
    configuredUrl: process.env.TEST_PG_ADMIN_URL ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL,
    dataDir,
  });
  const citus = await citusCluster(postgres.adminUrl);
  const redis = await ensureRedis(process.env.TEST_REDIS_URL ?? process.env.REDIS_URL);
  const s3 = await s3Starting;
  const lazy = await serveLazyServices(replicatedS3Starters(dataDir));
  started.__pdsTestServices = [postgres, redis, s3, lazy];

  process.env.TEST_PG_ADMIN_URL = postgres.adminUrl;
  // Tests that differ on a Citus coordinator (its databases are distributed already) read this.
  process.env.TEST_PG_CITUS = citus ? '1' : '';
  process.env.TEST_REDIS_URL = redis.url;
  process.env.TEST_S3_ENDPOINT = s3.endpoint;
  process.env.TEST_S3_ACCESS_KEY = s3.accessKey;
  process.env.TEST_S3_SECRET_KEY = s3.secretKey;
  process.env.TEST_S3_REGION = s3.region;
  process.env.TEST_LAZY_SERVICES_URL = lazy.url;
  process.env.TEST_GATEWAY_TEMPLATE = await ensureTemplate(postgres.adminUrl, 'gateway');
  process.env.TEST_DEX_TEMPLATE = await ensureTemplate(postgres.adminUrl, 'dex');
  process.stdout.write(
    `\ntest services: postgres ${postgres.origin} ${redact(postgres.adminUrl)}${citus ? ` (Citus, ${citus.workers.length} workers)` : ''}, redis ${redis.origin} ${redis.url}, s3 ${s3.origin} ${s3.endpoint}\n`,
  );
}
