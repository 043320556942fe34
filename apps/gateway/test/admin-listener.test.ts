// A running gateway serves the admin API on ADMIN_PORT and nowhere else, refuses to start with
// ADMIN_PORT but no ADMIN_TOKEN, and counts the cluster's instances by state on METRICS_PORT.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { loadConfigFor, type Env } from '@pds/config';
import { startGateway, type RunningGateway } from '@pds/gateway';
import { freePort } from '../../../scripts/lib/ports';
import { createDatabaseFrom } from '../../../test/support/templates';
import { CLUSTER, requireEnv, signUp, type SignedUp } from '../../../test/support/gateway';

const TOKEN = randomBytes(32).toString('hex');
let gateway: RunningGateway;
let metricsUrl: string;
let alice: SignedUp;
let dropDatabase: () => Promise<void>;

function config(env: Partial<Record<keyof Env, string>>) {
  return loadConfigFor('gateway', {
    CLUSTER_DOMAIN: CLUSTER,
    REDIS_URL: requireEnv('TEST_REDIS_URL'),
    QUEUE_PREFIX: `test-${randomBytes(4).toString('hex')}`,
    MASTER_KEY: randomBytes(32).toString('hex'),
    DATA_DIR: `/tmp/pds-test-data/${randomBytes(6).toString('hex')}`,
    LOG_LEVEL: 'silent',
    PORT: '0',
    ...env,
  });
}

beforeAll(async () => {
  const database = await createDatabaseFrom(requireEnv('TEST_PG_ADMIN_URL'), requireEnv('TEST_GATEWAY_TEMPLATE'));
  dropDatabase = database.drop;
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}`;
  gateway = await startGateway(
    config({ DATABASE_URL: database.url, ADMIN_PORT: String(await freePort()), ADMIN_TOKEN: TOKEN, METRICS_PORT: String(metricsPort) }),
  );
  alice = await signUp(gateway.gateway.app, 'alice');
  await signUp(gateway.gateway.app, 'bob');
});
afterAll(async () => {
  await gateway.close();
  await dropDatabase();
});

it('serves the admin API on its own port, and the public port does not', async () => {
  expect(gateway.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(gateway.adminUrl).not.toBe(gateway.url);
  const listed = await request(gateway.adminUrl!).get('/instances').set('Authorization', `Bearer ${TOKEN}`).expect(200);
  expect(listed.body.total).toBe(2);
  await request(gateway.adminUrl!).get('/instances').expect(401);
  for (const host of [alice.address, CLUSTER, '127.0.0.1']) {
    await request(gateway.url).get('/instances').set('Host', host).set('Authorization', `Bearer ${TOKEN}`).expect(404);
    await request(gateway.url).post(`/instances/${alice.address}/suspend`).set('Host', host).send({ reason: 'x' }).expect(404);
  }
  // The admin port serves nothing of the public API, whatever the Host.
  await request(gateway.adminUrl!)
    .get('/users/access_token/validate')
    .set('Host', alice.address)
    .set('X-Auth-Token', alice.token)
    .expect(404);
});

it('counts instances by state on METRICS_PORT, with no label naming an instance', async () => {
  await request(gateway.adminUrl!)
    .post(`/instances/${alice.address}/suspend`)
    .set('Authorization', `Bearer ${TOKEN}`)
    .send({ reason: 'x' })
    .expect(200);
  const res = await request(metricsUrl).get('/metrics').expect(200);
  const lines = res.text.split('\n').filter((line) => line.startsWith('pds_instances{'));
  expect(lines.sort()).toEqual([
    'pds_instances{state="active",process="gateway"} 1',
    'pds_instances{state="closing",process="gateway"} 0',
    'pds_instances{state="suspended",process="gateway"} 1',
  ]);
  // The usage totals: nothing stored yet, and no label naming an instance either.
  const stored = res.text.split('\n').filter((line) => line.startsWith('pds_stored_'));
  expect(stored.sort()).toEqual([
    'pds_stored_bytes{kind="files",process="gateway"} 0',
    'pds_stored_bytes{kind="records",process="gateway"} 0',
    'pds_stored_items{kind="files",process="gateway"} 0',
    'pds_stored_items{kind="records",process="gateway"} 0',
  ]);
  expect(res.text).not.toMatch(/alice|bob/);
});

it('refuses to start with ADMIN_PORT but no ADMIN_TOKEN, naming both', async () => {
  await expect(startGateway(config({ DATABASE_URL: 'postgres://127.0.0.1:1/none', ADMIN_PORT: '0' }))).rejects.toThrow(
    'ADMIN_PORT is set but ADMIN_TOKEN is not',
  );
});
