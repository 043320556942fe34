// `pnpm bench [--quick]`: the product, started as `pnpm start` runs it, side by side with a bare
// node:http + pg server doing the same essential work (scripts/bench/baseline.ts), both driven by a load
// generator in its own process (wrk, else autocannon) in interleaved rounds (A,B,A,B,…; medians).
// Prints a table of req/s, p50/p99 and the ratio per route, plus the search, stream, 10,000-instance,
// memory, mixed-traffic and GATEWAY_WORKERS figures; writes bench-results/bench-<time>.json and .md.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { call, expectStatus, warmEach } from './bench/client';
import { loadGenerator, runLoad, type BenchRequest, type LoadResult } from './bench/load';
import { cpuSeconds, collectedResidentBytes, startProcess, type Running } from './bench/processes';
import { markdownReport, type Report } from './bench/report';
import { instanceByAddress, seedFiles, seedRecords, seedSpread } from './bench/seed';
import { measureStreams } from './bench/streams';
import { ensureDatabase, ensurePostgres } from './lib/postgres';
import { freePort } from './lib/ports';
import { ensureRedis } from './lib/redis';

const quick = process.argv.includes('--quick');
/** `--only <words>`: run just the parts whose names contain one of the comma-separated words (e.g. `--only file,spread`). */
const onlyIndex = process.argv.indexOf('--only');
const only = onlyIndex >= 0 ? (process.argv[onlyIndex + 1] ?? '').toLowerCase().split(',').filter(Boolean) : [];
const wanted = (name: string) => only.length === 0 || only.some((word) => name.toLowerCase().includes(word));
const SETTINGS = quick
  ? { seconds: 2, rounds: 3, warmSeconds: 1, streamMiB: [1, 64], streamRounds: 2, mixedSeconds: 5, files: 100_000, spread: 10_000 }
  : { seconds: 5, rounds: 3, warmSeconds: 2, streamMiB: [1, 64, 512], streamRounds: 3, mixedSeconds: 10, files: 100_000, spread: 10_000 };
const CONNECTIONS = 32;
/** Search is measured for its latency, so with few connections (no queueing behind 1,000-row pages). */
const SEARCH_CONNECTIONS = 4;
const MIXED_CONNECTIONS = 48;
const CLUSTER = 'bench.localhost';
const PASSWORD = 'correct-horse-battery-staple-42';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
function medianResult(results: LoadResult[]): LoadResult {
  const pick = (k: Exclude<keyof LoadResult, 'errorKinds'>) => median(results.map((r) => r[k] ?? 0));
  return {
    requests: pick('requests'),
    seconds: pick('seconds'),
    rps: pick('rps'),
    p50: pick('p50'),
    p95: pick('p95'),
    p99: pick('p99'),
    errors: pick('errors'),
    cpuUsPerRequest: results.every((r) => r.cpuUsPerRequest !== undefined) ? pick('cpuUsPerRequest') : undefined,
  };
}

/** Copies the `.log` files of `workDir` into `dir`. */
function keepLogs(workDir: string, dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(workDir)) if (name.endsWith('.log')) cpSync(path.join(workDir, name), path.join(dir, name));
}

const log = (message: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);

async function main(): Promise<void> {
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'pds-bench-'));
  const running: Running[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  let cleaned: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaned ??= (async () => {
      for (const process of running.reverse()) await process.stop().catch(() => undefined);
      for (const cleanup of cleanups.reverse()) await cleanup().catch((e: unknown) => log(`clean-up: ${String(e)}`));
      // BENCH_LOGS=<dir>: the processes' logs are kept there; the work folder goes.
      if (process.env.BENCH_LOGS) keepLogs(workDir, path.resolve(process.env.BENCH_LOGS));
      rmSync(workDir, { recursive: true, force: true });
    })());
  // Ctrl-C still stops what the bench started and drops its databases.
  // A reader that goes away (`pnpm bench | head`) must not kill the bench before that either: EPIPE is ignored.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp().then(() => process.exit(130)));
  try {
    const postgres = await ensurePostgres({ configuredUrl: process.env.DATABASE_URL, dataDir: path.join(workDir, 'pg') });
    cleanups.push(() => postgres.stop());
    const redis = await ensureRedis(process.env.REDIS_URL);
    cleanups.push(() => redis.stop());
    const dbName = `pds_bench_${randomBytes(4).toString('hex')}`;
    const databaseUrl = await ensureDatabase(postgres.adminUrl, dbName);
    const dexDatabaseUrl = await ensureDatabase(postgres.adminUrl, `${dbName}_dex`);
    cleanups.push(async () => {
      const admin = new pg.Client({ connectionString: postgres.adminUrl });
      await admin.connect();
      for (const name of [dbName, `${dbName}_dex`]) await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      await admin.end();
    });
    const masterKey = randomBytes(32);
    const [port, dexPort, baselinePort, oneWorkerPort, twoWorkersPort] = (await Promise.all([1, 2, 3, 4, 5].map(() => freePort()))) as [
      number,
      number,
      number,
      number,
      number,
    ];
    const common = {
      DATABASE_URL: databaseUrl,
      DEX_DATABASE_URL: dexDatabaseUrl,
      REDIS_URL: redis.url,
      MASTER_KEY: masterKey.toString('hex'),
      CLUSTER_DOMAIN: CLUSTER,
      QUEUE_PREFIX: `bench-${randomBytes(4).toString('hex')}`,
      PUBLIC_URL_SCHEME: 'http',
      // The mixed traffic logs in far more often than one client would.
      LOGIN_RATE_LIMIT: '1000000000',
    };

    log(`starting the product (pnpm start) on :${port}, logs in ${workDir}`);
    const product = await startProcess(
      'product',
      'scripts/start.ts',
      port,
      { ...common, PORT: String(port), DEX_PORT: String(dexPort), DATA_DIR: path.join(workDir, 'product') },
      workDir,
      { collectable: true },
    );
    running.push(product);

    const signup = await call(
      port,
      'POST',
      '/api/signup',
      { Host: CLUSTER, 'Content-Type': 'application/json' },
      JSON.stringify({ fullName: 'Bench Owner', username: 'bench', email: 'bench@example.com', pass: PASSWORD, passRepeat: PASSWORD }),
    );
    if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${signup.body}`);
    const { accessToken: token } = JSON.parse(signup.body) as { accessToken: string };
    const host = `bench.${CLUSTER}`;

    log(`seeding ${SETTINGS.files} files and ${SETTINGS.spread} instances`);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const instance = await instanceByAddress(db, host);
    await seedFiles(db, instance, SETTINGS.files);
    await seedRecords(db, instance, 'bench', 'items', 100);
    const spread = await seedSpread(db, instance, masterKey, CLUSTER, SETTINGS.spread);
    await db.end();

    const baselineBlobs = path.join(workDir, 'baseline-blobs');
    mkdirSync(baselineBlobs);
    const baseline = await startProcess(
      'baseline',
      'scripts/bench/baseline.ts',
      baselinePort,
      {
        PORT: String(baselinePort),
        DATABASE_URL: databaseUrl,
        BENCH_INSTANCE_ID: instance.id,
        BENCH_ISSUER: host,
        BENCH_PUBLIC_KEY: instance.publicKeyPem,
        BENCH_BLOB_DIR: baselineBlobs,
      },
      workDir,
    );
    running.push(baseline);

    const auth = { Host: host, 'X-Auth-Token': token };
    const json = { ...auth, 'Content-Type': 'application/json' };
    const routes: {
      name: string;
      product: BenchRequest;
      baseline: BenchRequest;
      status: number;
      connections: number;
      target: number;
      compare: 'rps' | 'p95';
    }[] = [
      {
        name: 'file metadata GET',
        product: { method: 'GET', path: '/api/v2.6/files/file/bench1.txt', headers: auth },
        baseline: { method: 'GET', path: '/file/bench1.txt', headers: auth },
        status: 200,
        connections: CONNECTIONS,
        target: 0.4,
        compare: 'rps',
      },
      {
        name: 'content redirect',
        product: { method: 'GET', path: '/api/v2.6/files/content/bench1.txt', headers: auth },
        baseline: { method: 'GET', path: '/content/bench1.txt', headers: auth },
        status: 303,
        connections: CONNECTIONS,
        target: 0.4,
        compare: 'rps',
      },
      {
        name: 'token validate',
        product: { method: 'GET', path: '/users/access_token/validate', headers: auth },
        baseline: { method: 'GET', path: '/validate', headers: auth },
        status: 200,
        connections: CONNECTIONS,
        target: 0.4,
        compare: 'rps',
      },
      {
        name: 'GET /publickey',
        product: { method: 'GET', path: '/publickey', headers: { Host: host } },
        baseline: { method: 'GET', path: '/publickey', headers: {} },
        status: 200,
        connections: CONNECTIONS,
        target: 0.1,
        compare: 'rps',
      },
      {
        name: 'search take=1000 (p95)',
        product: { method: 'POST', path: '/api/v2.6/files/search?take=1000', headers: json, body: '{}' },
        baseline: { method: 'POST', path: '/search?take=1000', headers: auth },
        status: 200,
        connections: SEARCH_CONNECTIONS,
        target: 1.5,
        compare: 'p95',
      },
      {
        name: 'search take=100 (p95)',
        product: { method: 'POST', path: '/api/v2.6/files/search?take=100', headers: json, body: '{}' },
        baseline: { method: 'POST', path: '/search?take=100', headers: auth },
        status: 200,
        connections: SEARCH_CONNECTIONS,
        target: 2,
        compare: 'p95',
      },
    ];

    const report: Report = {
      date: new Date().toISOString(),
      quick,
      loadGenerator: loadGenerator(),
      cores: os.availableParallelism(),
      machine: `${os.cpus().length} cores, ${os.cpus()[0]?.model ?? '?'}, node ${process.version}`,
      settings: { ...SETTINGS, connections: CONNECTIONS, searchConnections: SEARCH_CONNECTIONS, mixedConnections: MIXED_CONNECTIONS },
      routes: [],
    };
    const load = (p: number, requests: BenchRequest[], connections: number, seconds = SETTINGS.seconds) =>
      runLoad({ port: p, requests, connections, seconds, workDir });
    /** A load run that also measures the server's CPU per request: steadier than req/s on a busy machine. */
    const loadWithCpu = async (p: number, pid: number, requests: BenchRequest[], connections: number, seconds = SETTINGS.seconds) => {
      const before = cpuSeconds(pid);
      const result = await load(p, requests, connections, seconds);
      return { ...result, cpuUsPerRequest: ((cpuSeconds(pid) - before) * 1e6) / Math.max(1, result.requests) };
    };

    for (const route of routes.filter((r) => wanted(r.name))) {
      await expectStatus(port, route.product, route.status, `${route.name} (product)`);
      await expectStatus(baselinePort, route.baseline, route.status, `${route.name} (baseline)`);
      log(`${route.name}: warming up, then ${SETTINGS.rounds} interleaved rounds`);
      await load(port, [route.product], route.connections, SETTINGS.warmSeconds);
      await load(baselinePort, [route.baseline], route.connections, SETTINGS.warmSeconds);
      const a: LoadResult[] = [];
      const b: LoadResult[] = [];
      for (let round = 0; round < SETTINGS.rounds; round++) {
        a.push(await loadWithCpu(port, product.process.pid as number, [route.product], route.connections));
        b.push(await loadWithCpu(baselinePort, baseline.process.pid as number, [route.baseline], route.connections));
      }
      const productResult = medianResult(a);
      const baselineResult = medianResult(b);
      const ratio = route.compare === 'rps' ? productResult.rps / baselineResult.rps : productResult.p95 / baselineResult.p95;
      report.routes.push({
        name: route.name,
        compare: route.compare,
        product: productResult,
        baseline: baselineResult,
        ratio,
        cpuRatio: (baselineResult.cpuUsPerRequest ?? 0) / (productResult.cpuUsPerRequest ?? 1),
        target: route.target,
        met: route.compare === 'rps' ? ratio >= route.target : ratio <= route.target,
      });
    }

    if (wanted('spread')) await measureSpread();
    if (wanted('mixed')) await measureMixed();
    if (wanted('workers')) await measureWorkers();
    if (wanted('streams')) await measureStreamsFigures();

    async function measureSpread() {
      log(`file GET over ${spread.length} instances vs one instance`);
      const many: BenchRequest[] = spread.map((s) => ({
        method: 'GET',
        path: '/api/v2.6/files/file/one.txt',
        headers: { Host: s.address, 'X-Auth-Token': s.token },
      }));
      const one = many.slice(0, 1);
      await expectStatus(port, many[many.length - 1] as BenchRequest, 200, 'spread file GET');
      const pid = product.process.pid as number;
      await load(port, one, CONNECTIONS, SETTINGS.warmSeconds);
      // The memory figure is what the instances add, not what serving requests grows the heap by: the
      // same number of requests, sent the same way, first to the one instance, then one to each.
      await warmEach(
        port,
        many.map(() => one[0] as BenchRequest),
      );
      const rssBefore = await collectedResidentBytes(pid);
      // The figure is about 10,000 *active* instances: at these rates each one is hit only about once
      // per round, so without this the rounds would measure first requests (key parsing, token
      // verification, account read) rather than the steady state.
      log(`warming each of the ${many.length} instances once`);
      await warmEach(port, many);
      const rssAfter = await collectedResidentBytes(pid);
      const oneResults: LoadResult[] = [];
      const manyResults: LoadResult[] = [];
      for (let round = 0; round < SETTINGS.rounds; round++) {
        oneResults.push(await loadWithCpu(port, pid, one, CONNECTIONS));
        manyResults.push(await loadWithCpu(port, pid, many, CONNECTIONS));
      }
      const oneInstance = medianResult(oneResults);
      const manyInstances = medianResult(manyResults);
      report.spread = {
        instances: spread.length,
        one: oneInstance,
        many: manyInstances,
        ratio: manyInstances.rps / oneInstance.rps,
        cpuRatio: (oneInstance.cpuUsPerRequest ?? 0) / (manyInstances.cpuUsPerRequest ?? 1),
        target: 0.9,
        met: manyInstances.rps / oneInstance.rps >= 0.9,
      };
      const perInstance = Math.max(0, rssAfter - rssBefore) / spread.length;
      report.memory = {
        rssBeforeBytes: rssBefore,
        rssAfterBytes: rssAfter,
        bytesPerActiveInstance: perInstance,
        targetBytes: 5 * 1024,
        met: perInstance <= 5 * 1024,
      };
    }

    async function measureMixed() {
      log('mixed traffic');
      const uploads: BenchRequest[] = [];
      for (let i = 0; i < 4; i++) {
        const started = await call(
          port,
          'POST',
          '/api/v2.6/files/upload',
          json,
          JSON.stringify({ name: `mixed-${i}.bin`, source: 'bench' }),
        );
        const url = new URL((JSON.parse(started.body) as { contentUrl: string }).contentUrl);
        uploads.push({
          method: 'PUT',
          path: url.pathname,
          headers: { Host: url.host, 'x-amz-server-side-encryption': 'AES256', 'Content-Type': 'application/octet-stream' },
          body: 'x'.repeat(16 * 1024),
        });
      }
      const search: BenchRequest = { method: 'POST', path: '/api/v2.6/files/search?take=100', headers: json, body: '{}' };
      const data: BenchRequest = { method: 'GET', path: '/api/v2.6/data/bench/items?take=20', headers: auth };
      const metadata: BenchRequest = {
        method: 'POST',
        path: '/api/v2.6/files/upload',
        headers: json,
        body: JSON.stringify({ name: 'mixed.txt', source: 'bench' }),
      };
      const login: BenchRequest = {
        method: 'GET',
        path: '/users/access_token',
        headers: { Host: host, username: 'bench', password: PASSWORD },
      };
      await expectStatus(port, data, 200, 'mixed: data');
      await expectStatus(port, login, 200, 'mixed: login');
      await expectStatus(port, uploads[0] as BenchRequest, 200, 'mixed: upload bytes');
      // Per 20 requests: 6 data reads, 5 searches, 4 byte uploads, 3 upload starts, 2 logins.
      const [u0, u1, u2, u3] = uploads as [BenchRequest, BenchRequest, BenchRequest, BenchRequest];
      const mix = [
        data,
        search,
        u0,
        metadata,
        data,
        search,
        login,
        u1,
        data,
        search,
        metadata,
        u2,
        data,
        search,
        login,
        data,
        u3,
        metadata,
        search,
        data,
      ];
      // The same mix without its logins: each login is one scrypt (N=16384, r=8, ≈40 ms of CPU on libuv's
      // pool), so at these rates the logins alone take about one of the two cores (docs/performance.md).
      const withoutLogins = mix.filter((request) => request !== login);
      const pid = product.process.pid as number;
      report.mixed = {
        connections: MIXED_CONNECTIONS,
        result: await loadWithCpu(port, pid, mix, MIXED_CONNECTIONS, SETTINGS.mixedSeconds),
        withoutLogins: await loadWithCpu(port, pid, withoutLogins, MIXED_CONNECTIONS, SETTINGS.mixedSeconds),
        loginShare: (mix.length - withoutLogins.length) / mix.length,
        p99TargetMs: 650 / 4,
      };
    }

    async function measureWorkers() {
      log('GATEWAY_WORKERS=1 vs 2 (the gateway run alone)');
      const gatewayEnv = { ...common, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', DATA_DIR: path.join(workDir, 'product') };
      const w1 = await startProcess(
        'gateway-1-worker',
        'apps/gateway/src/main.ts',
        oneWorkerPort,
        { ...gatewayEnv, PORT: String(oneWorkerPort), GATEWAY_WORKERS: '1' },
        workDir,
      );
      running.push(w1);
      const w2 = await startProcess(
        'gateway-2-workers',
        'apps/gateway/src/main.ts',
        twoWorkersPort,
        { ...gatewayEnv, PORT: String(twoWorkersPort), GATEWAY_WORKERS: '2' },
        workDir,
      );
      running.push(w2);
      const fileGet = routes[0]?.product as BenchRequest;
      await new Promise((r) => setTimeout(r, 2000)); // both workers of the second gateway listening
      await expectStatus(oneWorkerPort, fileGet, 200, 'file GET, GATEWAY_WORKERS=1');
      await expectStatus(twoWorkersPort, fileGet, 200, 'file GET, GATEWAY_WORKERS=2');
      await load(oneWorkerPort, [fileGet], CONNECTIONS, SETTINGS.warmSeconds);
      await load(twoWorkersPort, [fileGet], CONNECTIONS, SETTINGS.warmSeconds);
      const w1Results: LoadResult[] = [];
      const w2Results: LoadResult[] = [];
      for (let round = 0; round < SETTINGS.rounds; round++) {
        w1Results.push(await load(oneWorkerPort, [fileGet], CONNECTIONS));
        w2Results.push(await load(twoWorkersPort, [fileGet], CONNECTIONS));
      }
      const one1 = medianResult(w1Results);
      const two = medianResult(w2Results);
      report.workers = { route: 'file metadata GET', one: one1, two, scaling: two.rps / one1.rps };
      await w1.stop();
      await w2.stop();
    }

    async function measureStreamsFigures() {
      log(`streams: ${SETTINGS.streamMiB.join(', ')} MiB`);
      report.streams = (
        await measureStreams({
          sizesMiB: SETTINGS.streamMiB,
          rounds: SETTINGS.streamRounds,
          product: { port, host, token },
          baselinePort,
          diskDir: workDir,
        })
      ).map((f) => {
        const upload = f.uploadMBps.product / f.uploadMBps.baseline;
        const download = f.downloadMBps.product / f.downloadMBps.baseline;
        return { ...f, uploadRatio: upload, downloadRatio: download, target: 0.8, met: upload >= 0.8 && download >= 0.8 };
      });
    }

    const markdown = markdownReport(report);
    const outDir = path.resolve(__dirname, '..', 'bench-results');
    mkdirSync(outDir, { recursive: true });
    const stamp = report.date.replace(/[:.]/g, '-');
    writeFileSync(path.join(outDir, `bench-${stamp}.json`), JSON.stringify(report, null, 2));
    writeFileSync(path.join(outDir, `bench-${stamp}.md`), markdown);
    console.log(markdown);
    console.log(`\nwritten: bench-results/bench-${stamp}.json and .md`);
  } finally {
    await cleanUp();
  }
}

main().catch((error: unknown) => {
  console.error(`pnpm bench failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
