// Dex's OpenAPI document: valid 3.1, current in docs/, complete for every mounted route, and true
// about what registerHat, update-application and /publickey answer (checked with ajv).
import { readFileSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { Redis } from 'ioredis';
import request, { type Response } from 'supertest';
import { loadConfig } from '@pds/config';
import { createDexDb, type DexDb } from '@pds/db';
import { createDexApp, dexOpenApi } from '@pds/dex';
import { createLogger } from '@pds/runtime';
import { appPushProducer, keyFetchProducer, queueEvents, QUEUE_NAMES } from '@pds/queue';
import { generateRsaKeyPair, signingKeys } from '@pds/tokens';
import { OPENAPI_FILES, serialise } from '../../../scripts/openapi';
import { requireEnv } from '../../../test/support/gateway';
import type { AnyRoute } from '@pds/http';
import { documentedRoutes, declaredRoutes, openApiProblems, responseChecker } from '../../../test/support/openapi';
import { createDatabaseFrom } from '../../../test/support/templates';

const doc = dexOpenApi() as Parameters<typeof documentedRoutes>[0];

describe('the dex OpenAPI document', () => {
  let app: RequestListener;
  let routes: readonly AnyRoute[];
  let close: () => Promise<void>;

  beforeAll(async () => {
    const database = await createDatabaseFrom(requireEnv('TEST_PG_ADMIN_URL'), requireEnv('TEST_DEX_TEMPLATE'));
    const db: DexDb = createDexDb(database.url, { max: 2 });
    const redis = new Redis(requireEnv('TEST_REDIS_URL'), { maxRetriesPerRequest: null });
    const queue = { connection: redis, prefix: `test-openapi-${process.pid}` };
    const [keyFetch, appPush, keyFetchEvents] = [keyFetchProducer(queue), appPushProducer(queue), queueEvents(QUEUE_NAMES.keyFetch, queue)];
    const pem = await generateRsaKeyPair();
    const config = loadConfig({ LOG_LEVEL: 'silent', CLUSTER_DOMAIN: 'pds.test' });
    ({ app, routes } = createDexApp({
      config,
      db,
      redis,
      logger: createLogger({ level: 'silent' }),
      keys: signingKeys(pem.keyId, pem.privateKeyPem),
      keyFetch,
      keyFetchEvents,
      appPush,
      registerWaitMs: 100,
    }));
    close = async () => {
      await keyFetchEvents.close();
      await keyFetch.close();
      await appPush.close();
      redis.disconnect();
      await db.$disconnect();
      await database.drop();
    };
  });
  afterAll(() => close());

  it('is valid OpenAPI 3.1 with schemas ajv compiles', () => {
    expect(openApiProblems(doc)).toEqual([]);
  });

  it('is what docs/openapi-dex.json holds (run `pnpm openapi` after changing a route declaration)', () => {
    expect(JSON.parse(readFileSync(OPENAPI_FILES.dex, 'utf8'))).toEqual(JSON.parse(serialise(doc)));
  });

  it('describes every route dex serves, and no route it does not', () => {
    const mounted = declaredRoutes(routes);
    expect(mounted).toContain('POST /api/users/registerHat');
    expect(mounted.filter((route) => !documentedRoutes(doc).includes(route))).toEqual([]);
    expect(documentedRoutes(doc).filter((route) => !mounted.includes(route))).toEqual([]);
  });

  it('matches what dex answers, errors included', async () => {
    const check = responseChecker(doc);
    const responses: Response[] = [
      await request(app).get('/api/openapi.json'),
      await request(app).get('/publickey'),
      await request(app).post('/api/users/registerHat').send({ hatAddress: 'not an address' }),
      await request(app).post('/api/v3/users/registerHat').send({ hatAddress: 'alice.uncertified.example' }),
      await request(app).post('/api/users/update-application?hatFilter=*&cluster=pds.test').send({}),
      await request(app).post('/api/v3/users/update-application').set('x-auth-token', 'not-a-token').send({}),
    ];
    expect(responses.map((res) => res.status)).toEqual([200, 200, 400, 400, 401, 401]);
    expect(responses.flatMap(check)).toEqual([]);
  });
});
