// Dex answers /healthz and /readyz on any Host, before any other route.
import request from 'supertest';
import { startTestCluster, type TestCluster } from '../../../test/support/dex';

let c: TestCluster;
beforeAll(async () => {
  c = await startTestCluster({ worker: false });
});
afterAll(() => c.close());

it('answers /healthz and /readyz on any Host', async () => {
  for (const host of ['dex.example', 'alice.pds.test']) {
    expect((await request(c.dexUrl).get('/healthz').set('Host', host)).body).toEqual({ status: 'ok' });
    const ready = await request(c.dexUrl).get('/readyz').set('Host', host);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { postgres: 'ok', migrations: 'ok', redis: 'ok' } });
  }
});
