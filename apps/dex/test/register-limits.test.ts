// registerHat needs no authentication (spec), so what one client can make dex store and fetch is bounded:
// nothing is kept for an address whose key fetch failed, calls are limited per client, and concurrent
// registrations of one address never collide.
import request from 'supertest';
import { RegisteredInstanceRepository } from '@pds/db';
import { PEER_CLUSTER, startTestCluster, type TestCluster } from '../../../test/support/dex';

let c: TestCluster;
beforeAll(async () => {
  c = await startTestCluster({ registerWaitMs: 2500, env: { REGISTER_RATE_LIMIT: '20', TRUST_PROXY: 'loopback' } });
});
afterAll(() => c.close());

const register = (hatAddress: string, client: string) =>
  request(c.dexUrl).post('/api/users/registerHat').set('X-Forwarded-For', client).send({ hatAddress });

it('keeps no row for addresses that serve no key, however many are tried', async () => {
  for (let i = 0; i < 12; i++) {
    const res = await register(`ghost${i}.${PEER_CLUSTER}`, '198.51.100.1');
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('did not serve an RSA public key');
  }
  expect(await c.dexDb.registeredInstance.count({ where: { address: { startsWith: 'ghost' } } })).toBe(0);
}, 60_000);

it('limits registerHat per client address with 429 and Retry-After, other clients unaffected', async () => {
  await c.fakes.add(`limited.${PEER_CLUSTER}`);
  const statuses: number[] = [];
  for (let i = 0; i < 21; i++) statuses.push((await register(`limited.${PEER_CLUSTER}`, '198.51.100.2')).status);
  expect(statuses.slice(0, 20).every((s) => s === 200)).toBe(true);
  const refused = await register(`limited.${PEER_CLUSTER}`, '198.51.100.2');
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual({ error: 'Too Many Requests', message: expect.any(String) });
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  expect((await register(`limited.${PEER_CLUSTER}`, '198.51.100.3')).status).toBe(200);
}, 60_000);

it('creates one row when many registrations of one address run at once', async () => {
  const address = `race.${PEER_CLUSTER}`;
  await c.fakes.add(address);
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => register(address, `198.51.100.${10 + i}`)));
  expect(answers.map((a) => a.status).every((s) => s === 200 || s === 202)).toBe(true);
  expect(await c.dexDb.registeredInstance.count({ where: { address } })).toBe(1);
});

it('ensure is one atomic statement: 20 concurrent calls for a new address all succeed', async () => {
  const repo = new RegisteredInstanceRepository(c.dexDb);
  const rows = await Promise.all(Array.from({ length: 20 }, () => repo.ensure(`atomic.${PEER_CLUSTER}`, PEER_CLUSTER)));
  expect(new Set(rows.map((r) => r.address))).toEqual(new Set([`atomic.${PEER_CLUSTER}`]));
  expect(rows.every((r) => r.state === 'pending')).toBe(true);
});
