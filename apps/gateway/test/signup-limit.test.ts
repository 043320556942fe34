// Sign-up needs no authentication and each one costs a key pair and rows: it is limited per client
// address, in Redis, so the limit holds across gateways.
import request from 'supertest';
import { CLUSTER, STRONG_PASSWORD } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';

const { gw } = useGateway({ env: { SIGNUP_RATE_LIMIT: '2', SIGNUP_RATE_WINDOW: '3600', TRUST_PROXY: 'loopback' } });

const signup = (username: string, client: string) =>
  request(gw.app)
    .post('/api/signup')
    .set('Host', CLUSTER)
    .set('X-Forwarded-For', client)
    .send({ fullName: 'Limited Example', username, email: `${username}@example.com`, pass: STRONG_PASSWORD, passRepeat: STRONG_PASSWORD });

it('answers 429 with Retry-After past the limit, creating nothing, while other clients still sign up', async () => {
  expect((await signup('first', '203.0.113.5')).status).toBe(201);
  expect((await signup('second', '203.0.113.5')).status).toBe(201);
  const refused = await signup('third', '203.0.113.5');
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual({ error: 'Too Many Requests', message: expect.any(String) });
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500);
  expect(await gw.db.instance.count({ where: { address: `third.${CLUSTER}` } })).toBe(0);
  expect((await signup('fourth', '203.0.113.6')).status).toBe(201);
});

it('counts refused attempts too, so invalid bodies cannot probe without limit', async () => {
  expect((await signup('BAD NAME', '203.0.113.7')).status).toBe(400);
  expect((await signup('BAD NAME', '203.0.113.7')).status).toBe(400);
  expect((await signup('fine', '203.0.113.7')).status).toBe(429);
});

it('does not count a sign-up refused because the name is taken', async () => {
  expect((await signup('taken', '203.0.113.8')).status).toBe(201);
  for (let i = 0; i < 3; i++) expect((await signup('taken', '203.0.113.8')).status).toBe(409);
  expect((await signup('untaken', '203.0.113.8')).status).toBe(201);
  expect((await signup('over', '203.0.113.8')).status).toBe(429);
});
