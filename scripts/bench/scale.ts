// `pnpm bench --only scale` (issue 23): a provider-sized database — 1,000,000 instances, 10,000,000 files
// and 10,000,000 records at BENCH_SCALE=1 (the default; BENCH_SCALE=0.1 loads a tenth) by COPY into one
// PostgreSQL of its own — and what a gateway does on it: file GET spread over 100,000 active instances
// (scaled too) against one instance, search p95 on a 100,000-file instance against the same instance
// alone in a small database, what each active instance adds to the gateway's memory, database and index
// bytes per instance, the time a cold gateway needs to serve its first 10,000 instances, and sign-ups a
// second through the API on the loaded database.
import { randomBytes } from 'node:crypto';
import { chmodSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../lib/ports';
import { ensurePostgres } from '../lib/postgres';
import { migrate } from '../lib/prisma';
import { ensureRedis } from '../lib/redis';
import { call, expectStatus, warmEach } from './client';
import type { BenchRequest, LoadResult } from './load';
import type { Measurer } from './measure';
import { SEARCH_CONNECTIONS } from './options';
import { startProcess, type Running } from './processes';
import type { MemoryFigure, SpreadFigure } from './report';
import { addressOf, checkSealed, filesOf, keyPool, load, ownerToken, TABLES, type KeyPool, type ScaleShape } from './scale-load';
import { measureSpread } from './spread';
import { scratchDatabases } from './stack';
import type { Teardown } from './teardown';

const CLUSTER = 'scale.localhost';
const PASSWORD = 'correct-horse-battery-staple-42';
/** Key pairs the loaded instances draw from (each instance's copy sealed on its own). */
const KEY_POOL = 16;
const COLD_INSTANCES = 10_000;
const SIGNUPS = 40;
const SIGNUP_CONCURRENCY = 4;

interface TableSize {
  table: string;
  rows: number;
  tableBytes: number;
  indexBytes: number;
}

export interface ScaleFigure {
  scale: number;
  sharedBuffers: string;
  shape: ScaleShape;
  activeInstances: number;
  loadSeconds: Record<string, number>;
  spread: SpreadFigure;
  memory: MemoryFigure;
  search: { name: string; big: LoadResult; small: LoadResult; ratio: number; target: number; met: boolean }[];
  sizes: TableSize[];
  cold: { instances: number; startSeconds: number; serveSeconds: number };
  signup: { count: number; concurrency: number; seconds: number; perSecond: number };
}

/** BENCH_SCALE: a fraction of the provider-sized shape (instances, files, records, active instances). */
export function scaleShape(scale: number): { shape: ScaleShape; active: number } {
  if (!(scale > 0 && scale <= 1)) throw new Error(`BENCH_SCALE must be in (0, 1], not ${scale}`);
  const instances = Math.max(COLD_INSTANCES + 1, Math.round(1_000_000 * scale));
  const shape = { instances, files: Math.round(10_000_000 * scale), bigFiles: 100_000, records: Math.round(10_000_000 * scale) };
  return { shape, active: Math.min(instances - 1, Math.max(COLD_INSTANCES, Math.round(100_000 * scale))) };
}

async function sizes(url: string): Promise<TableSize[]> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ table: string; rows: string; tableBytes: string; indexBytes: string }>(
      `SELECT c.relname AS "table", c.reltuples::bigint AS "rows",
              pg_table_size(c.oid) AS "tableBytes", pg_indexes_size(c.oid) AS "indexBytes"
         FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relname = ANY($1)
        ORDER BY pg_total_relation_size(c.oid) DESC`,
      [[...TABLES]],
    );
    return rows.map((r) => ({ table: r.table, rows: Number(r.rows), tableBytes: Number(r.tableBytes), indexBytes: Number(r.indexBytes) }));
  } finally {
    await db.end();
  }
}

/**
 * A PostgreSQL of its own (embedded, in the work folder) unless BENCH_SCALE_DATABASE_URL names a server:
 * gigabytes of rows do not belong on a shared development server. Its shared_buffers is raised as a
 * provider would (BENCH_SCALE_SHARED_BUFFERS, 1GB; the embedded default of 128MB holds little of the
 * active instances' index pages) and takes effect on a restart.
 */
async function scalePostgres(workDir: string, sharedBuffers: string) {
  const options = { configuredUrl: process.env.BENCH_SCALE_DATABASE_URL, dataDir: path.join(workDir, 'pg'), embedded: true };
  const first = await ensurePostgres(options);
  if (first.origin !== 'embedded') return first;
  const admin = new pg.Client({ connectionString: first.adminUrl });
  await admin.connect();
  await admin.query(`ALTER SYSTEM SET shared_buffers = ${pg.escapeLiteral(sharedBuffers)}`);
  await admin.end();
  await first.stop();
  return ensurePostgres(options);
}

/** What the bench needs of one loaded instance: a file GET as its owner. */
function fileGet(pool: KeyPool, n: number) {
  return { address: addressOf(n, CLUSTER), token: ownerToken(pool, n, CLUSTER), fileId: 'f1.txt' };
}

/** Sign-ups through the API, a few at a time; the seconds they took together. */
async function signUps(port: number): Promise<number> {
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < SIGNUPS) {
      const username = `signup${next++}x${randomBytes(3).toString('hex')}`;
      const body = JSON.stringify({
        fullName: 'Scale Bench',
        username,
        email: `${username}@example.com`,
        pass: PASSWORD,
        passRepeat: PASSWORD,
      });
      const answer = await call(port, 'POST', '/api/signup', { Host: CLUSTER, 'Content-Type': 'application/json' }, body);
      if (answer.status !== 201) throw new Error(`sign-up: ${answer.status} ${answer.body.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: SIGNUP_CONCURRENCY }, worker));
  return (performance.now() - started) / 1000;
}

export async function measureScale(
  workDir: string,
  measurer: Measurer,
  teardown: Teardown,
  log: (message: string) => void,
): Promise<ScaleFigure> {
  const scale = Number(process.env.BENCH_SCALE ?? '1');
  const { shape, active } = scaleShape(scale);
  const sharedBuffers = process.env.BENCH_SCALE_SHARED_BUFFERS ?? '1GB';
  // The embedded server runs as the postgres user, who must reach its folder inside the work folder.
  chmodSync(workDir, 0o711);
  const postgres = await scalePostgres(workDir, sharedBuffers);
  teardown.add(() => postgres.stop());
  const redis = await ensureRedis(process.env.REDIS_URL);
  teardown.add(() => redis.stop());
  const name = `pds_scale_${randomBytes(4).toString('hex')}`;
  const [bigUrl, smallUrl] = (await scratchDatabases(postgres.adminUrl, [name, `${name}_small`], teardown)) as [string, string];
  await migrate('gateway', bigUrl);
  await migrate('gateway', smallUrl);

  const masterKey = randomBytes(32);
  const pool = await keyPool(KEY_POOL, masterKey);
  log(`loading ${shape.instances} instances, ${shape.files} files, ${shape.records} records by COPY (BENCH_SCALE=${scale})`);
  const loadStarted = performance.now();
  const loadSeconds = await load(bigUrl, shape, pool, CLUSTER, { from: 0, to: shape.instances }, log);
  loadSeconds.total = (performance.now() - loadStarted) / 1000;
  log(`the same ${filesOf(shape, 0)}-file instance alone in a small database`);
  await load(smallUrl, shape, pool, CLUSTER, { from: 0, to: 1 }, () => undefined);
  await checkSealed(bigUrl, masterKey);
  const tableSizes = await sizes(bigUrl);
  for (const t of tableSizes) log(`  ${t.table}: ${t.rows} rows, ${t.tableBytes} + ${t.indexBytes} bytes`);

  const gatewayEnv = (databaseUrl: string) => ({
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    MASTER_KEY: masterKey.toString('hex'),
    CLUSTER_DOMAIN: CLUSTER,
    QUEUE_PREFIX: `scale-${randomBytes(4).toString('hex')}`,
    PUBLIC_URL_SCHEME: 'http',
    SIGNUP_RATE_LIMIT: '1000000000',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    DATA_DIR: path.join(workDir, 'gateway'),
  });
  const gateways: Running[] = [];
  teardown.add(async () => {
    for (const g of gateways) await g.stop();
  });
  const gateway = async (label: string, databaseUrl: string) => {
    const port = await freePort();
    const running = await startProcess(
      label,
      'apps/gateway/src/main.ts',
      port,
      { ...gatewayEnv(databaseUrl), PORT: String(port) },
      workDir,
      {
        collectable: true,
      },
    );
    gateways.push(running);
    return { port, pid: running.process.pid as number, running };
  };

  log(`owner tokens of ${active} active instances`);
  const instances = Array.from({ length: active }, (_, i) => fileGet(pool, i + 1));

  // A cold gateway of its own: start-up, then one file GET for each of its first instances.
  log(`a cold gateway serving its first ${COLD_INSTANCES} instances`);
  const coldStarted = performance.now();
  const cold = await gateway('gateway-cold', bigUrl);
  const startSeconds = (performance.now() - coldStarted) / 1000;
  const served = performance.now();
  await warmEach(
    cold.port,
    instances.slice(0, COLD_INSTANCES).map((s) => ({
      method: 'GET',
      path: `/api/v2.6/files/file/${s.fileId}`,
      headers: { Host: s.address, 'X-Auth-Token': s.token },
    })),
  );
  const serveSeconds = (performance.now() - served) / 1000;
  log(`  started in ${startSeconds.toFixed(1)} s, served them in ${serveSeconds.toFixed(1)} s`);
  await cold.running.stop();

  const big = await gateway('gateway-scale', bigUrl);
  const small = await gateway('gateway-small', smallUrl);
  const owner = fileGet(pool, 0);
  const headers = { Host: owner.address, 'X-Auth-Token': owner.token, 'Content-Type': 'application/json' };
  const searches: [string, BenchRequest][] = [
    ['search take=100 (p95)', { method: 'POST', path: '/api/v2.6/files/search?take=100', headers, body: '{}' }],
    ['search one hit by exact name (p95)', { method: 'POST', path: '/api/v2.6/files/search?take=100', headers, body: '{"name":"f1.txt"}' }],
  ];
  const search: ScaleFigure['search'] = [];
  for (const [label, request] of searches) {
    for (const g of [big, small]) await expectStatus(g.port, request, 200, label);
    log(`${label}: ${shape.instances} instances vs the instance alone`);
    const side = (g: typeof big, where: string) => ({ label: `${label}, ${where}`, port: g.port, pid: g.pid, requests: [request] });
    const [onBig, onSmall] = (await measurer.interleaved(
      [side(big, 'big database'), side(small, 'small database')],
      SEARCH_CONNECTIONS,
    )) as [LoadResult, LoadResult];
    const ratio = onBig.p95 / onSmall.p95;
    search.push({ name: label, big: onBig, small: onSmall, ratio, target: 1.1, met: ratio <= 1.1 });
    log(`  p95 ${onBig.p95.toFixed(1)} / ${onSmall.p95.toFixed(1)} ms = ${ratio.toFixed(2)}×`);
  }
  await small.running.stop();

  log(`file GET over ${active} active instances vs one`);
  const { spread, memory } = await measureSpread(big, instances, measurer, log, 3 * 1024);
  log(
    `  ${spread.ratio.toFixed(2)} (by CPU/req ${spread.cpuRatio.toFixed(2)}), ${(memory.bytesPerActiveInstance / 1024).toFixed(2)} KiB per instance`,
  );

  log(`${SIGNUPS} sign-ups through the API, ${SIGNUP_CONCURRENCY} at a time`);
  const signupSeconds = await signUps(big.port);
  return {
    scale,
    sharedBuffers: process.env.BENCH_SCALE_DATABASE_URL ? 'as configured' : sharedBuffers,
    shape,
    activeInstances: active,
    loadSeconds,
    spread,
    memory,
    search,
    sizes: tableSizes,
    cold: { instances: COLD_INSTANCES, startSeconds, serveSeconds },
    signup: { count: SIGNUPS, concurrency: SIGNUP_CONCURRENCY, seconds: signupSeconds, perSecond: SIGNUPS / signupSeconds },
  };
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => (n >= 10 ? n.toFixed(0) : n.toFixed(1));
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const mark = (met: boolean) => (met ? 'yes' : '**no**');

export function scaleMarkdown(s: ScaleFigure, machine: string): string {
  const { shape } = s;
  const bytes = s.sizes.reduce((sum, t) => sum + t.tableBytes, 0);
  const indexes = s.sizes.reduce((sum, t) => sum + t.indexBytes, 0);
  const lines = [
    `# pnpm bench --only scale (BENCH_SCALE=${s.scale}): ${new Date().toISOString()}`,
    '',
    `${machine}. Loaded by COPY into one PostgreSQL (shared_buffers ${s.sharedBuffers}): ${int(shape.instances)} instances, ${int(shape.files)} files (${int(shape.bigFiles)} in one instance), ${int(shape.records)} records, in ${ms(s.loadSeconds.total ?? 0)} s.`,
    '',
    '| figure | value | target | met |',
    '|---|---|---|---|',
    `| file GET over ${int(s.activeInstances)} active instances / on one | ${int(s.spread.many.rps)} / ${int(s.spread.one.rps)} req/s = ${s.spread.ratio.toFixed(2)} (by CPU/req ${s.spread.cpuRatio.toFixed(2)}) | ≥ 0.9 | ${mark(s.spread.met)} |`,
    ...s.search.map(
      (x) =>
        `| ${x.name}: ${int(shape.bigFiles)}-file instance in the big / a small database | p95 ${ms(x.big.p95)} / ${ms(x.small.p95)} ms = ${x.ratio.toFixed(2)}× | ≤ ${x.target}× | ${mark(x.met)} |`,
    ),
    `| gateway memory per active instance | ${(s.memory.bytesPerActiveInstance / 1024).toFixed(2)} KiB (RSS ${mib(s.memory.rssBeforeBytes)} → ${mib(s.memory.rssAfterBytes)}) | ≤ 3 KiB | ${mark(s.memory.met)} |`,
    `| sign-ups through the API on the loaded database | ${s.signup.perSecond.toFixed(1)} a second (${s.signup.count}, ${s.signup.concurrency} at a time) | — | — |`,
    `| cold gateway: start, then its first ${int(s.cold.instances)} instances served | ${s.cold.startSeconds.toFixed(1)} s + ${s.cold.serveSeconds.toFixed(1)} s | — | — |`,
    `| database per instance: tables + indexes | ${int(bytes / shape.instances)} + ${int(indexes / shape.instances)} bytes (${mib(bytes)} + ${mib(indexes)}) | — | — |`,
    '',
    '| table | rows | table bytes | index bytes | bytes per instance |',
    '|---|--:|--:|--:|--:|',
    ...s.sizes.map(
      (t) =>
        `| ${t.table} | ${int(t.rows)} | ${mib(t.tableBytes)} | ${mib(t.indexBytes)} | ${int((t.tableBytes + t.indexBytes) / shape.instances)} |`,
    ),
    '',
    `Load: ${Object.entries(s.loadSeconds)
      .map(([what, seconds]) => `${what} ${ms(seconds)} s`)
      .join(', ')}.`,
  ];
  return lines.join('\n') + '\n';
}
