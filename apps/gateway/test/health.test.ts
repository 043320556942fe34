// /healthz and /readyz: answered on any Host before tenancy and auth; /readyz names what is down.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import { loadConfigFor } from '@pds/config';
import { createGatewayDb } from '@pds/db';
import { createLogger } from '@pds/runtime';
import { dexRegistrationProducer } from '@pds/queue';
import { createBlobStore } from '@pds/storage';
import { createApp, startGateway } from '@pds/gateway';
import { dropDatabase, ensureDatabase, withDatabase } from '../../../scripts/lib/postgres';
import { freePort } from '../../../scripts/lib/ports';
import { requireEnv } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';

const { gw } = useGateway();

describe('GET /healthz', () => {
  it.each(['alice.pds.test', 'nobody.example', '127.0.0.1:8080'])('answers 200 on Host %s without credentials', async (host) => {
    const res = await request(gw.app).get('/healthz').set('Host', host);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe('GET /readyz', () => {
  it('answers 200 listing every dependency when all answer', async () => {
    const res = await request(gw.app).get('/readyz').set('Host', 'unknown.example');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { postgres: 'ok', migrations: 'ok', redis: 'ok', 'blob store': 'ok' } });
  });

  /** A gateway app on `databaseUrl` and `redisUrl`, built as main.ts does. */
  async function gatewayOn(databaseUrl: string, redisUrl: string) {
    const config = loadConfigFor('gateway', {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      LOG_LEVEL: 'silent',
      MASTER_KEY: randomBytes(32).toString('hex'),
      DATA_DIR: `/tmp/pds-test-data/${randomBytes(6).toString('hex')}`,
    });
    const db = createGatewayDb(databaseUrl, { max: 1 });
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
    redis.on('error', () => undefined);
    const dexRegistration = dexRegistrationProducer({ connection: redis, prefix: `test-${randomBytes(4).toString('hex')}` });
    const { app } = createApp({
      config,
      db,
      redis,
      logger: createLogger({ level: 'silent' }),
      masterKey: config.MASTER_KEY,
      dexRegistration,
      blobStore: await createBlobStore(config),
    });
    return {
      app,
      close: async () => {
        await dexRegistration.close().catch(() => undefined);
        redis.disconnect();
        await db.$disconnect();
      },
    };
  }

  it('answers 503 naming a database that does not exist and a Redis that does not answer', async () => {
    const missing = withDatabase(requireEnv('TEST_PG_ADMIN_URL'), `pds_missing_${randomBytes(4).toString('hex')}`);
    const g = await gatewayOn(missing, `redis://127.0.0.1:${await freePort()}`);
    try {
      const res = await request(g.app).get('/readyz').set('Host', 'alice.pds.test');
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('Service Unavailable');
      expect(res.body.message).toMatch(
        /^Not ready: postgres \(.*database "pds_missing_\w+" does not exist.*\); migrations \(.*\); redis \(.+\)$/,
      );
      expect(res.body.checks['blob store']).toBe('ok');
      expect(JSON.stringify(res.body)).not.toMatch(/password|at .*\.ts/);
    } finally {
      await g.close();
    }
  });

  it('answers 503 naming the migrations a database lacks', async () => {
    const name = `pds_empty_${randomBytes(4).toString('hex')}`;
    const g = await gatewayOn(await ensureDatabase(requireEnv('TEST_PG_ADMIN_URL'), name), requireEnv('TEST_REDIS_URL'));
    try {
      const res = await request(g.app).get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body.checks).toMatchObject({ postgres: 'ok', redis: 'ok' });
      expect(res.body.checks.migrations).toMatch(/_prisma_migrations" does not exist/);
    } finally {
      await g.close();
      await dropDatabase(requireEnv('TEST_PG_ADMIN_URL'), name);
    }
  });
});

describe('startGateway', () => {
  it('refuses to start on a database that does not exist, naming it', async () => {
    const missing = withDatabase(requireEnv('TEST_PG_ADMIN_URL'), 'pds_never_created');
    const config = loadConfigFor('gateway', {
      DATABASE_URL: missing,
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      LOG_LEVEL: 'silent',
      PORT: String(await freePort()),
      MASTER_KEY: randomBytes(32).toString('hex'),
    });
    await expect(startGateway(config)).rejects.toThrow(/^gateway cannot start: postgres \(.*database "pds_never_created" does not exist/);
  });
});
