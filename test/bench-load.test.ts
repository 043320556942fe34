// The bench's load path on real processes: wrk driving a node:http server, directly and through nginx
// configured as infra/compose's (Debian's wrk and nginx-light, which .ci/run installs).
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { childrenCpuSeconds, runLoad } from '../scripts/bench/load';
import { requireNoErrors } from '../scripts/bench/measure';
import { treeCpuSeconds } from '../scripts/bench/processes';
import { startNginx, type RunningNginx } from '../scripts/lib/nginx';
import { freePort } from '../scripts/lib/ports';

let workDir: string;
let server: http.Server;
let port: number;
/** What the server saw of each request. */
const seen: { host?: string; forwardedHost?: string; forwardedFor?: string; forwardedProto?: string; connection?: string }[] = [];

beforeAll(async () => {
  workDir = mkdtempSync(path.join(os.tmpdir(), 'bench-load-test-'));
  // As the baseline's hello: node:http answers a request without Host with 400 and closes the connection.
  server = http.createServer((req, res) => {
    seen.push({
      host: req.headers.host,
      forwardedHost: req.headers['x-forwarded-host'] as string | undefined,
      forwardedFor: req.headers['x-forwarded-for'] as string | undefined,
      forwardedProto: req.headers['x-forwarded-proto'] as string | undefined,
      connection: req.headers.connection,
    });
    const id = req.headers['x-request-id'];
    if (typeof id === 'string') res.setHeader('X-Request-Id', id);
    res.statusCode = req.url === '/missing' ? 404 : 200;
    // The slow path answers after 30 ms: its group's latencies must show it, the others' must not.
    setTimeout(() => res.end('hello'), req.url === '/slow' ? 30 : 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(workDir, { recursive: true, force: true });
});

beforeEach(() => {
  seen.length = 0;
});

const load = (target: number, requests: Parameters<typeof runLoad>[0]['requests']) =>
  runLoad({ port: target, requests, connections: 4, seconds: 2, workDir });

describe('wrk', () => {
  it('sends a request given no Host with the address it drives, on kept-alive connections (the bare hello of 2026-11-25 went without)', async () => {
    const result = requireNoErrors('hello', await load(port, [{ method: 'GET', path: '/publickey', headers: {} }]));
    // Many requests, not one per connection (a loaded CI machine gave 65 in a second; an idle one gives thousands).
    expect(result.requests).toBeGreaterThan(20);
    expect(new Set(seen.map((s) => s.host))).toEqual(new Set([`127.0.0.1:${port}`]));
    // Its own CPU, to take out of the machine's.
    expect(result.loadGeneratorCpuSeconds).toBeGreaterThan(0);
  });

  it("reads its CPU time from bash's `times`: the children's line, user and system", () => {
    expect(childrenCpuSeconds('RESULT {}\n0m0.004s 0m0.001s\n0m1.250s 0m0.125s\n')).toBeCloseTo(1.375, 6);
    expect(childrenCpuSeconds('1m2.5s 0m0.5s')).toBeCloseTo(63, 6);
    expect(() => childrenCpuSeconds('RESULT {}\n')).toThrow("no CPU times after wrk's output");
  });

  it('counts answers outside 2xx/3xx as errors, which fail a measured run', async () => {
    const result = await load(port, [{ method: 'GET', path: '/missing', headers: { Host: 'bench.localhost' } }]);
    expect(result.errors).toBe(result.requests);
    expect(() => requireNoErrors('missing', result)).toThrow(/^missing: \d+ of \d+ requests failed \(status \d+\)/);
  });

  it('times each group of requests apart', async () => {
    const result = await load(port, [
      { method: 'GET', path: '/slow', headers: { Host: 'a' }, group: 'slow' },
      { method: 'GET', path: '/fast', headers: { Host: 'a' }, group: 'fast' },
      { method: 'GET', path: '/fast', headers: { Host: 'a' }, group: 'fast' },
    ]);
    const { slow, fast } = result.groups ?? {};
    expect(slow?.p50).toBeGreaterThanOrEqual(29);
    // Medians, not tails: on a loaded machine a fast request's p99 can pass 30 ms by scheduling alone.
    expect(fast?.p50).toBeLessThan(15);
    // In turn, two fast ones for each slow one (give or take those in flight at the end).
    expect(Math.abs((fast?.requests ?? 0) - 2 * (slow?.requests ?? 0))).toBeLessThanOrEqual(8);
  });
});

describe('nginx as infra/compose configures it', () => {
  let nginx: RunningNginx;
  let proxied: number;

  beforeAll(async () => {
    proxied = await freePort();
    const upstream = `127.0.0.1:${port}`;
    nginx = await startNginx({
      dir: path.join(workDir, 'nginx'),
      vars: { CLUSTER_DOMAIN: 'bench.localhost' },
      servers: { 'gateway-1:8080': upstream, 'gateway-2:8080': upstream, 'dex:8081': upstream, 's3:8333': upstream },
      listen: { 80: proxied, 8080: await freePort() },
    });
  });
  afterAll(() => nginx.stop());

  it('passes the instance host and the forwarded headers of gateways.conf, over kept-alive upstream connections', async () => {
    const result = requireNoErrors(
      'proxied',
      await load(proxied, [{ method: 'GET', path: '/', headers: { Host: 'alice.bench.localhost' } }]),
    );
    expect(seen.length).toBeGreaterThanOrEqual(result.requests);
    expect(seen[0]).toEqual({
      host: 'alice.bench.localhost',
      forwardedHost: 'alice.bench.localhost',
      forwardedFor: '127.0.0.1',
      forwardedProto: 'http',
      connection: undefined,
    });
    // nginx's master and its workers all count.
    expect(treeCpuSeconds(nginx.pid)).toBeGreaterThan(0);
  });

  it('refuses a configuration that leaves an upstream of the compose files without an address here', async () => {
    await expect(
      startNginx({ dir: path.join(workDir, 'broken'), vars: {}, servers: { 'gateway-1:8080': '127.0.0.1:1' }, listen: { 80: 1, 8080: 2 } }),
    ).rejects.toThrow('nginx: no address given for gateway-2:8080');
  });
});
