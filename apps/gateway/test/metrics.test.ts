// Prometheus metrics of a running gateway, on METRICS_PORT and not on the public port: request
// durations by route template (never the raw path), cache hits, pool use and Node's defaults.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { loadConfigFor } from '@pds/config';
import { startGateway, type RunningGateway } from '@pds/gateway';
import { freePort } from '../../../scripts/lib/ports';
import { createDatabaseFrom } from '../../../test/support/templates';
import { CLUSTER, requireEnv, signUp } from '../../../test/support/gateway';

let gateway: RunningGateway;
let metricsUrl: string;
let dropDatabase: () => Promise<void>;
beforeAll(async () => {
  const database = await createDatabaseFrom(requireEnv('TEST_PG_ADMIN_URL'), requireEnv('TEST_GATEWAY_TEMPLATE'));
  dropDatabase = database.drop;
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}`;
  gateway = await startGateway(
    loadConfigFor('gateway', {
      CLUSTER_DOMAIN: CLUSTER,
      DATABASE_URL: database.url,
      REDIS_URL: requireEnv('TEST_REDIS_URL'),
      QUEUE_PREFIX: `test-${randomBytes(4).toString('hex')}`,
      MASTER_KEY: randomBytes(32).toString('hex'),
      DATA_DIR: `/tmp/pds-test-data/${randomBytes(6).toString('hex')}`,
      LOG_LEVEL: 'silent',
      PORT: '0',
      METRICS_PORT: String(metricsPort),
    }),
  );
});
afterAll(async () => {
  await gateway.close();
  await dropDatabase();
});

/** The sample lines of one metric, e.g. `name{labels} value`. */
async function samples(name: string): Promise<string[]> {
  const res = await request(metricsUrl).get('/metrics').expect(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  return res.text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

it('times requests by route template and status, never by raw path', async () => {
  const alice = await signUp(gateway.gateway.app, 'alice');
  for (const id of ['a1', 'b2']) {
    await request(gateway.url).get(`/api/v2.6/files/file/${id}`).set('Host', alice.address).set('X-Auth-Token', alice.token).expect(404);
  }
  await request(gateway.url).get('/no/such/path/42').set('Host', alice.address).set('X-Auth-Token', alice.token).expect(404);
  const counts = await samples('http_request_duration_seconds_count');
  expect(counts).toContainEqual(
    'http_request_duration_seconds_count{process="gateway",method="GET",route="/api/v2.6/files/file/:fileId",status="404"} 2',
  );
  expect(counts).toContainEqual(expect.stringMatching(/route="unmatched",status="404"/));
  expect(counts.join('\n')).not.toMatch(/a1|b2|42/);
  expect(await samples('http_requests_in_flight')).toEqual(['http_requests_in_flight{process="gateway"} 0']);
});

it('times the requests the fast dispatcher serves under their route templates', async () => {
  const carol = await signUp(gateway.gateway.app, 'carol');
  for (let i = 0; i < 3; i++)
    await request(gateway.url).get('/users/access_token/validate').set('Host', carol.address).set('X-Auth-Token', carol.token).expect(200);
  await request(gateway.url).get('/publickey').set('Host', carol.address).expect(200);
  const counts = await samples('http_request_duration_seconds_count');
  expect(counts).toContainEqual(
    'http_request_duration_seconds_count{process="gateway",method="GET",route="/users/access_token/validate",status="200"} 3',
  );
  expect(counts).toContainEqual('http_request_duration_seconds_count{process="gateway",method="GET",route="/publickey",status="200"} 1');
  expect(await samples('http_requests_in_flight')).toEqual(['http_requests_in_flight{process="gateway"} 0']);
});

it('counts instance-registry and token-cache hits and misses', async () => {
  const bob = await signUp(gateway.gateway.app, 'bob');
  for (let i = 0; i < 3; i++)
    await request(gateway.url).get('/users/access_token/validate').set('Host', bob.address).set('X-Auth-Token', bob.token).expect(200);
  const lookups = await samples('cache_lookups_total');
  const value = (cache: string, result: string) =>
    Number(
      lookups
        .find((l) => l.includes(`cache="${cache}"`) && l.includes(`result="${result}"`))
        ?.split(' ')
        .pop(),
    );
  expect(value('instance-registry', 'hit')).toBeGreaterThanOrEqual(2);
  expect(value('instance-registry', 'miss')).toBeGreaterThanOrEqual(1);
  expect(value('verified-token', 'hit')).toBeGreaterThanOrEqual(2);
});

it('reports pool use and Node defaults, and serves none of it on the public port', async () => {
  expect(await samples('db_pool_connections')).toEqual(
    expect.arrayContaining([expect.stringMatching(/^db_pool_connections\{state="total",process="gateway"\} [1-9]/)]),
  );
  expect(await samples('nodejs_heap_size_used_bytes')).toHaveLength(1);
  expect((await request(gateway.url).get('/metrics').set('Host', CLUSTER)).status).toBe(404);
});
