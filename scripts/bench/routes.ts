// The route figures: each request to the product beside the bare baseline's request doing the same
// essential work, both through their nginx and directly, in interleaved rounds. The targets are the
// through-proxy ratios (issue 32; search's p95, issue 25): that is how the product runs when deployed.
import { call, expectStatus } from './client';
import type { BenchRequest, LoadResult } from './load';
import type { Measurer, Side } from './measure';
import { CONNECTIONS, SEARCH_CONNECTIONS, type Settings } from './options';
import { missedTargetsOf, pairOf, type RouteFigure, type Targets } from './report';
import { APP, type Stack, type Target } from './stack';

export interface RouteSpec {
  name: string;
  product: BenchRequest;
  baseline: BenchRequest;
  status: number;
  /** A header the product's answer must carry: the CORS grant of a browser app's requests. */
  header?: string;
  connections: number;
  compare: 'rps' | 'p95';
  /** None for the hello, which is the sanity line's reference. */
  targets?: Targets;
  /** A write: measured in the settings' writeRounds rounds. */
  writes?: boolean;
}

/** The rounds a figure is measured in. */
export const roundsOf = (route: RouteSpec, settings: Settings) => (route.writes ? settings.writeRounds : settings.rounds);

/** The bare hello and the product's cheapest route: measured whenever any route is, for the sanity line. */
export const HELLO = 'GET /publickey (bare: hello)';
export const FILE_GET = 'file metadata GET';
/** Records an app writes in one request, for the batch figures. */
export const BATCH = 20;

export function routeSpecs(stack: Stack): RouteSpec[] {
  const host = { Host: stack.host };
  const owner = { ...host, 'X-Auth-Token': stack.token };
  const app = { ...host, 'X-Auth-Token': stack.appToken };
  // A browser app's calls carry its origin, one the product allows (the app's own, from its pushed record).
  const browser = { ...app, Origin: APP.origin };
  const json = { 'Content-Type': 'application/json' };
  const record = JSON.stringify({ title: 'a note', rank: 1 });
  const batch = Array.from({ length: BATCH }, (_, i) => ({ title: `note ${i}`, rank: i }));
  const search = (name: string, take: number, template: Record<string, string>): RouteSpec => ({
    name,
    product: {
      method: 'POST',
      path: `/api/v2.6/files/search?take=${take}`,
      headers: { ...owner, ...json },
      body: JSON.stringify(template),
    },
    baseline: { method: 'POST', path: `/search?take=${take}${template.name ? `&name=${template.name}` : ''}`, headers: owner },
    status: 200,
    connections: SEARCH_CONNECTIONS,
    compare: 'p95',
    targets: { p95: 1.2 },
  });
  const data = (name: string, headers: Record<string, string>, write: boolean): RouteSpec => ({
    name,
    // Writes go to a table of their own, so the reads keep reading the same 100 records.
    product: write
      ? { method: 'POST', path: `/api/v2.6/data/${APP.namespace}/written`, headers: { ...headers, ...json }, body: record }
      : { method: 'GET', path: `/api/v2.6/data/${APP.namespace}/items?take=100`, headers },
    baseline: write
      ? { method: 'POST', path: `/data/${APP.namespace}/written`, headers: { ...headers, ...json }, body: record }
      : { method: 'GET', path: `/data/${APP.namespace}/items?take=100`, headers },
    status: write ? 201 : 200,
    header: headers.Origin ? 'access-control-allow-origin' : undefined,
    connections: CONNECTIONS,
    compare: 'rps',
    targets: write ? { rps: 0.6, cpu: 0.6 } : { cpu: 0.75 },
    writes: write,
  });
  // The same rows either way: an array posted to one table, or data-batch's list of table and record;
  // the bare server inserts them with one INSERT … VALUES of all of them.
  const batchWrite = (name: string, product: BenchRequest): RouteSpec => ({
    name,
    product,
    baseline: { method: 'POST', path: `/data/${APP.namespace}/batched`, headers: { ...app, ...json }, body: JSON.stringify(batch) },
    status: 201,
    connections: CONNECTIONS,
    compare: 'rps',
    targets: { rps: 0.8, cpu: 0.8 },
    writes: true,
  });
  const read = (name: string, product: string, baseline: string, status: number): RouteSpec => ({
    name,
    product: { method: 'GET', path: product, headers: owner },
    baseline: { method: 'GET', path: baseline, headers: owner },
    status,
    connections: CONNECTIONS,
    compare: 'rps',
    targets: { cpu: 0.85 },
  });
  return [
    read(FILE_GET, '/api/v2.6/files/file/bench1.txt', '/file/bench1.txt', 200),
    read('content redirect', '/api/v2.6/files/content/bench1.txt', '/content/bench1.txt', 303),
    // The product caches the account; the baseline reads it.
    read('token validate', '/users/access_token/validate', '/validate', 200),
    search('search 1,000 hits (p95)', 1000, {}),
    search('search take=100 (p95)', 100, {}),
    search('search one hit by exact name (p95)', 100, { name: 'bench1.txt' }),
    data('app reads 100 records', app, false),
    data('app writes one record', app, true),
    batchWrite(`app writes a batch of ${BATCH} records (an array to one table)`, {
      method: 'POST',
      path: `/api/v2.6/data/${APP.namespace}/batched`,
      headers: { ...app, ...json },
      body: JSON.stringify(batch),
    }),
    batchWrite(`app writes a batch of ${BATCH} records (data-batch)`, {
      method: 'POST',
      path: '/api/v2.6/data-batch',
      headers: { ...app, ...json },
      body: JSON.stringify(batch.map((data) => ({ endpoint: `${APP.namespace}/batched`, data }))),
    }),
    data('browser app (Origin) reads 100 records', browser, false),
    data('browser app (Origin) writes one record', browser, true),
    {
      name: HELLO,
      product: { method: 'GET', path: '/publickey', headers: host },
      baseline: { method: 'GET', path: '/publickey', headers: host },
      status: 200,
      connections: CONNECTIONS,
      compare: 'rps',
    },
  ];
}

/** Fails early when a request about to be measured does not answer as expected, on any of its four ways. */
async function check(route: RouteSpec, stack: Stack): Promise<void> {
  for (const [side, target, request] of [
    ['product', stack.product, route.product],
    ['baseline', stack.baseline, route.baseline],
  ] as const) {
    for (const port of [target.proxied, target.direct]) {
      const how = port === target.proxied ? 'through nginx' : 'direct';
      await expectStatus(port, request, route.status, `${route.name} (${side}, ${how})`);
      if (route.header && side === 'product') {
        const answer = await call(port, request.method, request.path, request.headers, request.body);
        if (!answer.headers[route.header]) throw new Error(`${route.name} (product, ${how}): no ${route.header} in the answer`);
      }
    }
  }
}

export async function measureRoute(route: RouteSpec, stack: Stack, measurer: Measurer): Promise<RouteFigure> {
  await check(route, stack);
  const side = (label: string, target: Target, requests: BenchRequest[], proxied: boolean): Side => ({
    label: `${route.name}, ${label} ${proxied ? 'through nginx' : 'direct'}`,
    port: proxied ? target.proxied : target.direct,
    pid: target.pid,
    proxyPid: proxied ? target.proxyPid : undefined,
    backends: target.backends,
    redisPid: target.redisPid,
    requests,
  });
  const [productProxied, baselineProxied, productDirect, baselineDirect] = (await measurer.interleaved(
    [
      side('product', stack.product, [route.product], true),
      side('baseline', stack.baseline, [route.baseline], true),
      side('product', stack.product, [route.product], false),
      side('baseline', stack.baseline, [route.baseline], false),
    ],
    route.connections,
    roundsOf(route, measurer.settings),
  )) as [LoadResult, LoadResult, LoadResult, LoadResult];
  const proxied = pairOf(route.compare, productProxied, baselineProxied);
  return {
    name: route.name,
    compare: route.compare,
    proxied,
    direct: pairOf(route.compare, productDirect, baselineDirect),
    targets: route.targets,
    met: route.targets && missedTargetsOf(proxied, route.targets).length === 0,
  };
}
