// Mixed traffic through the product's nginx at 48 connections: per 20 requests 6 data reads, 5
// searches, 4 byte uploads, 3 upload starts and 2 logins (10 %). The target is the p99 of the requests
// that are not logins, while the logins (scrypt-bound) run beside them; the same mix without its logins
// is run too, for what one login costs.
import { call, expectStatus } from './client';
import type { BenchRequest } from './load';
import type { Measurer, Side } from './measure';
import { MIXED_CONNECTIONS } from './options';
import type { MixedFigure } from './report';
import { PASSWORD, type Stack } from './stack';

export const MIXED_P99_TARGET_MS = 100;

async function signedUploads(port: number, headers: Record<string, string>): Promise<BenchRequest[]> {
  const uploads: BenchRequest[] = [];
  for (let i = 0; i < 4; i++) {
    const started = await call(
      port,
      'POST',
      '/api/v2.6/files/upload',
      headers,
      JSON.stringify({ name: `mixed-${i}.bin`, source: 'bench' }),
    );
    if (started.status !== 200) throw new Error(`mixed: upload start ${started.status} ${started.body}`);
    const url = new URL((JSON.parse(started.body) as { contentUrl: string }).contentUrl);
    uploads.push({
      method: 'PUT',
      path: url.pathname,
      headers: { Host: url.host, 'x-amz-server-side-encryption': 'AES256', 'Content-Type': 'application/octet-stream' },
      body: 'x'.repeat(16 * 1024),
      group: 'other',
    });
  }
  return uploads;
}

export async function measureMixed(stack: Stack, measurer: Measurer): Promise<MixedFigure> {
  const port = stack.product.proxied;
  const auth = { Host: stack.host, 'X-Auth-Token': stack.token };
  const json = { ...auth, 'Content-Type': 'application/json' };
  const [u0, u1, u2, u3] = (await signedUploads(port, json)) as [BenchRequest, BenchRequest, BenchRequest, BenchRequest];
  const search: BenchRequest = { method: 'POST', path: '/api/v2.6/files/search?take=100', headers: json, body: '{}', group: 'other' };
  const data: BenchRequest = { method: 'GET', path: '/api/v2.6/data/bench/items?take=20', headers: auth, group: 'other' };
  const metadata: BenchRequest = {
    method: 'POST',
    path: '/api/v2.6/files/upload',
    headers: json,
    body: JSON.stringify({ name: 'mixed.txt', source: 'bench' }),
    group: 'other',
  };
  const login: BenchRequest = {
    method: 'GET',
    path: '/users/access_token',
    headers: { Host: stack.host, username: 'bench', password: PASSWORD },
    group: 'login',
  };
  await expectStatus(port, data, 200, 'mixed: data');
  await expectStatus(port, login, 200, 'mixed: login');
  await expectStatus(port, u0, 200, 'mixed: upload bytes');
  // prettier-ignore
  const mix = [data, search, u0, metadata, data, search, login, u1, data, search, metadata, u2, data, search, login, data, u3, metadata, search, data];
  // Each login is one scrypt (N=16384, r=8, ≈ 40 ms of CPU on libuv's pool): at these rates the logins
  // alone take about one of the two cores (docs/performance.md).
  const withoutLogins = mix.filter((request) => request !== login);
  const side = (requests: BenchRequest[]): Side => ({
    label: 'mixed traffic through nginx',
    port,
    pid: stack.product.pid,
    proxyPid: stack.product.proxyPid,
    backends: stack.product.backends,
    redisPid: stack.product.redisPid,
    requests,
  });
  return {
    connections: MIXED_CONNECTIONS,
    result: await measurer.withCpu(side(mix), MIXED_CONNECTIONS, measurer.settings.mixedSeconds),
    withoutLogins: await measurer.withCpu(side(withoutLogins), MIXED_CONNECTIONS, measurer.settings.mixedSeconds),
    loginShare: (mix.length - withoutLogins.length) / mix.length,
    p99TargetMs: MIXED_P99_TARGET_MS,
  };
}
