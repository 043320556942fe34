// GET /api/signup/available: whether a name is free and free ones to offer, telling no more than a
// refused sign-up would, counted apart from sign-ups.
import request from 'supertest';
import { CLUSTER, signUp, startTestGateway, type TestGateway } from '../../../test/support/gateway';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ SIGNUP_RATE_LIMIT: '2', TRUST_PROXY: 'loopback' });
  await signUp(gw.app, 'alice');
  await signUp(gw.app, 'alice2');
});
afterAll(() => gw.close());

const check = (query: string, ip = '198.51.100.7') =>
  request(gw.app).get(`/api/signup/available?${query}`).set('Host', CLUSTER).set('X-Forwarded-For', ip);

it('says a free name is available, and offers free names for a taken one', async () => {
  expect((await check('username=zoe')).body).toEqual({ available: true, suggestions: [] });
  const taken = await check('username=alice&fullName=Alice%20Example');
  expect(taken.status).toBe(200);
  // alice2 is taken too: the next numbers are offered.
  expect(taken.body).toEqual({ available: false, suggestions: ['alice-example', 'alice3', 'alice4'] });
  expect((await check('username=alice')).body).toEqual({ available: false, suggestions: ['alice3', 'alice4', 'alice5'] });
});

it('says a reserved name is not available, and refuses a name that is no DNS label with 400', async () => {
  expect((await check('username=admin')).body).toEqual({ available: false, suggestions: ['admin2', 'admin3', 'admin4'] });
  for (const query of ['username=Alice', 'username=a', 'username=-alice', '']) {
    const res = await check(query);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('username');
  }
});

it('is rate-limited per client on a counter of its own, which sign-ups do not share', async () => {
  // SIGNUP_RATE_LIMIT 2: twenty checks per window, then 429 with Retry-After.
  const statuses: number[] = [];
  for (let i = 0; i < 21; i++) statuses.push((await check(`username=name${i}x`, '203.0.113.9')).status);
  expect(statuses.slice(0, 20).every((status) => status === 200)).toBe(true);
  const refused = await check('username=zoe', '203.0.113.9');
  expect(refused.status).toBe(429);
  expect(refused.headers['retry-after']).toMatch(/^\d+$/);
  // Another client is still answered.
  expect((await check('username=zoe', '203.0.113.10')).status).toBe(200);
});
