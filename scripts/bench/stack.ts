// Everything a `pnpm bench` run measures, started once: PostgreSQL (the machine's, or a private one), a
// Redis of the run's own (so that its CPU is the product's), the product as `pnpm start` runs it, its data (an owner, 100,000 files, 100 records, an app set
// up with its token, 10,000 more instances), the bare baseline on the same database, and in front of
// each of the two its own nginx configured as infra/compose's (scripts/lib/nginx.ts): the same
// configuration, only the upstream address differs. Each of the two names its PostgreSQL connections
// (`application_name`), so that the CPU of their backends can be counted (serving.ts).
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ensureDebianCommand } from '../lib/debian';
import { startNginx } from '../lib/nginx';
import { freePort } from '../lib/ports';
import { ensureDatabase, ensurePostgres } from '../lib/postgres';
import { startRedisServer } from '../lib/redis';
import { call } from './client';
import type { Settings } from './options';
import { startProcess, type Running } from './processes';
import { instanceByAddress, seedApplication, seedFiles, seedRecords, seedSpread } from './seed';
import { Backends, withApplicationName as named } from './serving';
import type { Teardown } from './teardown';

export const CLUSTER = 'bench.localhost';
export const PASSWORD = 'correct-horse-battery-staple-42';
/** The app the bench sets up: it reads and writes its own namespace. */
export const APP = { namespace: 'bench', url: 'https://bench-app.example/', origin: 'https://bench-app.example' };

/** A server the bench measures, reached directly or through its nginx. */
export interface Target {
  direct: number;
  proxied: number;
  pid: number;
  proxyPid: number;
  /** The `application_name` of its PostgreSQL connections. */
  backends: string;
  /** The Redis that serves it alone (the product's). */
  redisPid?: number;
}

export interface Stack {
  workDir: string;
  /** Finds each side's PostgreSQL backends. */
  backends: Backends;
  product: Target;
  baseline: Target;
  /** The owner's instance address and the owner's token. */
  host: string;
  token: string;
  /** The set-up app's token. */
  appToken: string;
  spread: { address: string; token: string }[];
  /** What a gateway of the product needs besides PORT (the workers part starts more of them). */
  gatewayEnv: Record<string, string>;
}

/** A set-up call to the product; its JSON answer. */
async function json<T>(port: number, method: string, target: string, headers: Record<string, string>, body?: unknown): Promise<T> {
  const sent =
    body === undefined ? { headers } : { headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
  const answer = await call(port, method, target, sent.headers, sent.body);
  if (answer.status >= 300) throw new Error(`${method} ${target}: ${answer.status} ${answer.body}`);
  return JSON.parse(answer.body) as T;
}

/**
 * PostgreSQL, two databases of the bench's own, dropped at the end, and the connection that finds
 * backends; and a Redis of its own (Debian's redis-server, installed when missing).
 */
async function startServices(workDir: string, teardown: Teardown, log: (message: string) => void) {
  const postgres = await ensurePostgres({ configuredUrl: process.env.DATABASE_URL, dataDir: path.join(workDir, 'pg') });
  teardown.add(() => postgres.stop());
  const backends = await Backends.connect(postgres.adminUrl);
  teardown.add(() => backends.close());
  ensureDebianCommand('redis-server', 'redis-server', log);
  const redis = await startRedisServer();
  teardown.add(() => redis.stop());
  const dbName = `pds_bench_${randomBytes(4).toString('hex')}`;
  const [databaseUrl, dexDatabaseUrl] = (await scratchDatabases(postgres.adminUrl, [dbName, `${dbName}_dex`], teardown)) as [
    string,
    string,
  ];
  return { databaseUrl, dexDatabaseUrl, redisUrl: redis.url, redisPid: redis.pid, backends };
}

/** New databases of these names on the server, dropped at the end of the run; their URLs. */
export async function scratchDatabases(adminUrl: string, names: string[], teardown: Teardown): Promise<string[]> {
  const urls: string[] = [];
  for (const name of names) urls.push(await ensureDatabase(adminUrl, name));
  teardown.add(async () => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    for (const name of names) await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await admin.end();
  });
  return urls;
}

/**
 * The owner (signed up through the API), the bulk data, and the app: its record stored as a push
 * stores it, then set up and given its token by the owner through the API.
 */
async function seedData(port: number, databaseUrl: string, masterKey: Buffer, settings: Settings) {
  const signup = { fullName: 'Bench Owner', username: 'bench', email: 'bench@example.com', pass: PASSWORD, passRepeat: PASSWORD };
  const { accessToken: token } = await json<{ accessToken: string }>(port, 'POST', '/api/signup', { Host: CLUSTER }, signup);
  const host = `bench.${CLUSTER}`;
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const instance = await instanceByAddress(db, host);
  await seedFiles(db, instance, settings.files);
  await seedRecords(db, instance, APP.namespace, 'items', 100);
  await seedApplication(db, instance, APP.namespace, APP.url);
  const spread = await seedSpread(db, instance, masterKey, CLUSTER, settings.spread);
  await db.end();
  const owner = { Host: host, 'X-Auth-Token': token };
  await json(port, 'POST', `/api/v2.6/applications/${APP.namespace}/setup`, owner);
  const app = await json<{ accessToken: string }>(port, 'GET', `/api/v2.6/applications/${APP.namespace}/access-token`, owner);
  return { host, token, appToken: app.accessToken, spread, instance };
}

/** An nginx as infra/compose's whose gateways are `upstream`, listening on `listen`; its master's pid. */
export async function startProxy(
  workDir: string,
  name: string,
  upstream: number,
  listen: number,
  dexPort: number,
  teardown: Teardown,
  log: (message: string) => void,
) {
  const gateway = `127.0.0.1:${upstream}`;
  const nginx = await startNginx(
    {
      dir: path.join(workDir, name),
      vars: { CLUSTER_DOMAIN: CLUSTER },
      // The product keeps its blobs in the local store, which the gateway serves: s3.<domain> is never asked for.
      servers: { 'gateway-1:8080': gateway, 'gateway-2:8080': gateway, 'dex:8081': `127.0.0.1:${dexPort}`, 's3:8333': gateway },
      // 8080: the internal server through which dex's worker reaches instances (unused here).
      listen: { 80: listen, 8080: await freePort() },
    },
    log,
  );
  teardown.add(() => nginx.stop());
  return nginx.pid;
}

export async function startStack(workDir: string, settings: Settings, teardown: Teardown, log: (message: string) => void): Promise<Stack> {
  const { databaseUrl, dexDatabaseUrl, redisUrl, redisPid, backends } = await startServices(workDir, teardown, log);
  // Unique to the run: two benches on one PostgreSQL (a before/after comparison) must not count each other's.
  const run = randomBytes(4).toString('hex');
  const names = { product: `bench-product-${run}`, baseline: `bench-baseline-${run}` };
  const [port, dexPort, baselinePort, productProxy, baselineProxy] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const masterKey = randomBytes(32);
  const gatewayEnv = {
    DATABASE_URL: named(databaseUrl, names.product),
    DEX_DATABASE_URL: named(dexDatabaseUrl, names.product),
    REDIS_URL: redisUrl,
    MASTER_KEY: masterKey.toString('hex'),
    CLUSTER_DOMAIN: CLUSTER,
    QUEUE_PREFIX: `bench-${randomBytes(4).toString('hex')}`,
    PUBLIC_URL_SCHEME: 'http',
    // The addresses the product signs (uploads, content) lead through its nginx, as deployed.
    PUBLIC_PORT: String(productProxy),
    // The mixed traffic logs in far more often than one client would.
    LOGIN_RATE_LIMIT: '1000000000',
    // Behind its nginx as compose deploys it: one proxy in front, whose X-Forwarded-Host is believed.
    TRUST_PROXY: '1',
    DATA_DIR: path.join(workDir, 'product'),
  };

  log(`starting the product (pnpm start) on :${port}, logs in ${workDir}`);
  const productEnv = { ...gatewayEnv, PORT: String(port), DEX_PORT: String(dexPort) };
  const product = await startProcess('product', 'scripts/start.ts', port, productEnv, workDir, { collectable: true });
  teardown.add(() => product.stop());
  log(`seeding ${settings.files} files and ${settings.spread} instances`);
  const { host, token, appToken, spread, instance } = await seedData(port, databaseUrl, masterKey, settings);

  const baselineBlobs = path.join(workDir, 'baseline-blobs');
  mkdirSync(baselineBlobs);
  const baselineEnv = {
    PORT: String(baselinePort),
    DATABASE_URL: named(databaseUrl, names.baseline),
    BENCH_INSTANCE_ID: instance.id,
    BENCH_ISSUER: host,
    BENCH_PUBLIC_KEY: instance.publicKeyPem,
    BENCH_BLOB_DIR: baselineBlobs,
    BENCH_ORIGIN: APP.origin,
  };
  const baseline = await startProcess('baseline', 'scripts/bench/baseline.ts', baselinePort, baselineEnv, workDir);
  teardown.add(() => baseline.stop());

  log(`nginx as infra/compose configures it: :${productProxy} → the product, :${baselineProxy} → the baseline`);
  const proxy = (name: string, upstream: number, listen: number) => startProxy(workDir, name, upstream, listen, dexPort, teardown, log);
  const target = async (running: Running, direct: number, proxied: number, name: string) => ({
    direct,
    proxied,
    pid: running.process.pid as number,
    proxyPid: await proxy(name, direct, proxied),
  });
  return {
    workDir,
    backends,
    product: { ...(await target(product, port, productProxy, 'nginx-product')), backends: names.product, redisPid },
    baseline: { ...(await target(baseline, baselinePort, baselineProxy, 'nginx-baseline')), backends: names.baseline },
    host,
    token,
    appToken,
    spread,
    gatewayEnv,
  };
}
