import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import { loadConfigFor } from '@pds/config';
import { createGatewayDb } from '@pds/db';
import { createLogger } from '@pds/runtime';
import { dexRegistrationProducer } from '@pds/queue';
import { createBlobStore } from '@pds/storage';
import { createApp } from '@pds/gateway';
import { freePort } from '../../../scripts/lib/ports';
import { requireEnv } from '../../../test/support/gateway';

describe('when the database is unreachable', () => {
  it('answers 503 with the error model and no internals', async () => {
    const deadUrl = `postgres://postgres@127.0.0.1:${await freePort()}/nothing`;
    const masterKey = randomBytes(32);
    const config = loadConfigFor('gateway', {
      CLUSTER_DOMAIN: 'pds.test',
      DATABASE_URL: deadUrl,
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      LOG_LEVEL: 'silent',
      MASTER_KEY: masterKey.toString('hex'),
      DATA_DIR: `/tmp/pds-test-data/${randomBytes(6).toString('hex')}`,
    });
    const db = createGatewayDb(deadUrl);
    const redis = new Redis(requireEnv('TEST_REDIS_URL'));
    const prefix = `test-${randomBytes(4).toString('hex')}`;
    const dexRegistration = dexRegistrationProducer({ connection: redis, prefix });
    const { app } = createApp({
      config,
      db,
      redis,
      logger: createLogger({ level: 'silent' }),
      masterKey,
      dexRegistration,
      blobStore: await createBlobStore(config),
      redisPrefix: prefix,
    });
    try {
      const res = await request(app).get('/').set('Host', 'alice.pds.test');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 'Service Unavailable', message: expect.any(String) });
      expect(JSON.stringify(res.body)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|prisma|at /i);
    } finally {
      await dexRegistration.close();
      redis.disconnect();
      await db.$disconnect();
    }
  });
});
