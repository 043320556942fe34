// `pnpm bench`: throughput and latency of the gateway's hot paths against real PostgreSQL and Redis
// (configured, local, or started as for the tests). Bounded: a fixed number of requests per scenario,
// loopback only. Prints one row per scenario.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadConfigFor } from '@pds/config';
import { createGatewayDb } from '@pds/db';
import { createApp } from '@pds/gateway';
import { createLogger } from '@pds/http';
import { dexRegistrationProducer } from '@pds/queue';
import { createBlobStore } from '@pds/storage';
import { verifyToken, VerifiedTokenCache, readUnverified, type TokenClaims } from '@pds/tokens';
import { ensureDatabase, ensurePostgres } from './lib/postgres';
import { migrate } from './lib/prisma';
import { ensureRedis } from './lib/redis';

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

function call(port: number, method: string, urlPath: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Row {
  scenario: string;
  requests: number;
  concurrency: number;
  'req/s': number;
  'p50 ms': number;
  'p99 ms': number;
}

async function scenario(name: string, requests: number, concurrency: number, one: () => Promise<void>): Promise<Row> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < requests) {
        const t = performance.now();
        await one();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(2));
  return { scenario: name, requests, concurrency, 'req/s': Math.round(requests / seconds), 'p50 ms': at(0.5), 'p99 ms': at(0.99) };
}

async function main() {
  const postgres = await ensurePostgres({ configuredUrl: process.env.DATABASE_URL, dataDir: path.join(os.tmpdir(), 'pds-bench') });
  const redisServer = await ensureRedis(process.env.REDIS_URL);
  const dbName = `pds_bench_${randomBytes(4).toString('hex')}`;
  const url = await ensureDatabase(postgres.adminUrl, dbName);
  await migrate('gateway', url);

  const masterKey = randomBytes(32);
  const config = loadConfigFor('gateway', {
    CLUSTER_DOMAIN: 'bench.test',
    DATABASE_URL: url,
    REDIS_URL: redisServer.url,
    LOG_LEVEL: 'silent',
    LOGIN_RATE_LIMIT: '1000000',
    MASTER_KEY: masterKey.toString('hex'),
    DATA_DIR: path.join(os.tmpdir(), 'pds-bench', 'data'),
  });
  const db = createGatewayDb(url, { max: 10 });
  const redis = new Redis(redisServer.url);
  const prefix = `bench-${randomBytes(4).toString('hex')}`;
  const dexRegistration = dexRegistrationProducer({ connection: redis, prefix });
  const blobStore = await createBlobStore(config);
  const { app } = createApp({ config, db, redis, logger: createLogger({ level: 'silent' }), masterKey, dexRegistration, blobStore, redisPrefix: prefix });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as AddressInfo).port;

  const password = 'correct-horse-battery-staple-42';
  const signup = await call(port, 'POST', '/api/signup', { host: 'bench.test', 'content-type': 'application/json' },
    JSON.stringify({ fullName: 'Bench', username: 'bench', email: 'b@example.com', pass: password, passRepeat: password }));
  const { accessToken } = JSON.parse(signup.body) as { accessToken: string };
  const host = 'bench.bench.test';

  const rows: Row[] = [];
  const expect200 = (r: { status: number }) => {
    if (r.status !== 200) throw new Error(`unexpected status ${r.status}`);
  };
  rows.push(await scenario('GET / (tenant resolution)', 5000, 16, async () => expect200(await call(port, 'GET', '/', { host }))));
  rows.push(await scenario('GET validate (cached token + account read)', 5000, 16, async () =>
    expect200(await call(port, 'GET', '/users/access_token/validate', { host, 'x-auth-token': accessToken }))));
  rows.push(await scenario('GET /users/user (owner list)', 3000, 16, async () =>
    expect200(await call(port, 'GET', '/users/user', { host, 'x-auth-token': accessToken }))));
  rows.push(await scenario('login (scrypt N=16384)', 100, 4, async () =>
    expect200(await call(port, 'GET', '/users/access_token', { host, username: 'bench', password }))));

  // In-process: the cost the verified-token cache saves on every request after the first.
  const publicKeyPem = (await call(port, 'GET', '/publickey', { host })).body;
  const { createPublicKey } = await import('node:crypto');
  const key = createPublicKey(publicKeyPem);
  const now = Math.floor(Date.now() / 1000);
  rows.push(await scenario('verifyToken RS256 (in-process)', 5000, 1, async () => void verifyToken(accessToken, key, host, now)));
  const cache = new VerifiedTokenCache();
  cache.set('i', accessToken, readUnverified(accessToken).claims as TokenClaims, now);
  rows.push(await scenario('verified-token cache hit (in-process)', 5000, 1, async () => void cache.get('i', accessToken, now)));

  console.table(rows);

  server.close();
  agent.destroy();
  await dexRegistration.queue.obliterate({ force: true });
  await dexRegistration.close();
  redis.disconnect();
  await db.$disconnect();
  const admin = new pg.Client({ connectionString: postgres.adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${pg.escapeIdentifier(dbName)} with (force)`);
  await admin.end();
  await redisServer.stop();
  await postgres.stop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
