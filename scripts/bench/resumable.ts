// Resumable uploads (tus) against the spec's single signed PUT, for the same bytes on each store.
// `pnpm bench --only resumable [--mib 1024] [--rounds 3] [--chunk-mib 0]` (or this file with tsx).
// For each store the product runs as `pnpm start` runs it, with its own PostgreSQL databases and Redis:
// - local: both ways through the product's nginx as infra/compose configures it (the gateway serves the
//   signed PUT and tus alike);
// - s3 (OpenStack Swift's s3api, started for the run), or rgw (Ceph's RADOS Gateway over three OSDs, two
//   copies, started for the run): the single PUT goes straight to the store, as a phone sends it to a
//   presigned address, and tus to the gateway, which sends the parts on to the store as a multipart
//   upload. Both are reached directly: the presigned signature covers the Host with its port, which a
//   proxy on a port of the run's own would not pass on unchanged.
// Each round uploads a new file both ways (who goes first alternates) and times the transfer alone (the
// PUT; tus's creation and PATCHes), then completes the file and checks its size. Figures: medians of
// MB/s, and the product's CPU (its process tree) per GiB moved. tus sends the body in one PATCH, as
// tus-js-client and Uppy do by default; `--chunk-mib N` sends PATCHes of N MiB instead.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../lib/ports';
import { ensurePostgres } from '../lib/postgres';
import { startRedisServer } from '../lib/redis';
import { startCephRgw } from '../lib/ceph';
import { startSwift } from '../lib/swift';
import { call } from './client';
import { startProcess, treeCpuSeconds } from './processes';
import { CLUSTER, PASSWORD, scratchDatabases, startProxy } from './stack';
import { Teardown } from './teardown';

const MiB = 1024 * 1024;
const TARGET = 0.8;

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const mbps = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);
const log = (message: string) => console.error(`[bench resumable ${new Date().toISOString().slice(11, 19)}] ${message}`);
const b64 = (text: string) => Buffer.from(text).toString('base64');

interface Way {
  mbps: number[];
  cpuPerGiB: number[];
}

type Store = 'local' | 's3' | 'rgw';

interface StoreFigure {
  store: Store;
  path: string;
  mib: number;
  single: { MBps: number; cpuSecondsPerGiB: number };
  tus: { MBps: number; cpuSecondsPerGiB: number };
  ratio: number;
  met: boolean;
}

/** A product of the run's own on `store`, signed up, and how to reach it. */
/** `megabytes`: what the run will upload in all (Ceph keeps it in memory). */
async function startProduct(store: Store, workDir: string, teardown: Teardown, megabytes: number) {
  const postgres = await ensurePostgres({ configuredUrl: process.env.DATABASE_URL, dataDir: path.join(workDir, 'pg') });
  teardown.add(() => postgres.stop());
  const redis = await startRedisServer();
  teardown.add(() => redis.stop());
  const name = `pds_bench_tus_${randomBytes(4).toString('hex')}`;
  const [databaseUrl, dexDatabaseUrl] = (await scratchDatabases(postgres.adminUrl, [name, `${name}_dex`], teardown)) as [string, string];
  const [port, dexPort, proxyPort] = [await freePort(), await freePort(), await freePort()];
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    DEX_DATABASE_URL: dexDatabaseUrl,
    REDIS_URL: redis.url,
    MASTER_KEY: randomBytes(32).toString('hex'),
    CLUSTER_DOMAIN: CLUSTER,
    PUBLIC_URL_SCHEME: 'http',
    TRUST_PROXY: '1',
    DATA_DIR: path.join(workDir, `product-${store}`),
    PORT: String(port),
    DEX_PORT: String(dexPort),
    // Every round keeps its two files: room for all of them.
    QUOTA_BYTES: String(1024 ** 4),
  };
  if (store === 'local') env.PUBLIC_PORT = String(proxyPort);
  else {
    // Ceph keeps every round's files on each of its OSDs, in memory: room for them all, warm-ups and all.
    const osdBytes = Math.max(256 * MiB, Math.ceil(1.25 * megabytes) * MiB);
    const s3 =
      store === 'rgw' ? await startCephRgw(path.join(workDir, 'ceph'), { osdBytes }) : await startSwift(path.join(workDir, 'swift'));
    teardown.add(() => s3.stop());
    Object.assign(env, {
      STORAGE: 's3',
      S3_ENDPOINT: s3.endpoint,
      S3_ACCESS_KEY: s3.accessKey,
      S3_SECRET_KEY: s3.secretKey,
      S3_REGION: s3.region,
      S3_BUCKET: `bench-${randomBytes(3).toString('hex')}`,
    });
  }
  log(`${store}: starting the product on :${port}`);
  const product = await startProcess(`product-${store}`, 'scripts/start.ts', port, env, workDir);
  teardown.add(() => product.stop());
  if (store === 'local') await startProxy(workDir, 'nginx', port, proxyPort, dexPort, teardown, log);
  const signup = { fullName: 'Bench Owner', username: 'bench', email: 'bench@example.com', pass: PASSWORD, passRepeat: PASSWORD };
  const answer = await call(port, 'POST', '/api/signup', { Host: CLUSTER, 'Content-Type': 'application/json' }, JSON.stringify(signup));
  if (answer.status !== 201) throw new Error(`sign-up: ${answer.status} ${answer.body.slice(0, 300)}`);
  const { accessToken } = JSON.parse(answer.body) as { accessToken: string };
  return {
    pid: product.process.pid as number,
    /** Where the API is reached: the product's nginx for the local store, else the gateway itself. */
    apiPort: store === 'local' ? proxyPort : port,
    host: `bench.${CLUSTER}`,
    token: accessToken,
  };
}

async function measureStore(store: Store, data: Buffer, rounds: number, chunk: number, workDir: string): Promise<StoreFigure> {
  const teardown = new Teardown(log);
  const storeDir = path.join(workDir, store);
  mkdirSync(storeDir);
  try {
    const product = await startProduct(store, storeDir, teardown, (2 * (rounds + 1) * data.length) / MiB);
    const auth = { Host: product.host, 'X-Auth-Token': product.token };
    const api = (method: string, target: string, headers: Record<string, string> = {}, body?: string | Buffer) =>
      call(product.apiPort, method, target, { ...auth, ...headers }, body);
    const begin = async (name: string) => {
      const json = { 'Content-Type': 'application/json' };
      const answer = await api('POST', '/api/v2.6/files/upload', json, JSON.stringify({ name, source: 'bench' }));
      if (answer.status !== 200) throw new Error(`upload start: ${answer.status} ${answer.body}`);
      return JSON.parse(answer.body) as { fileId: string; contentUrl: string };
    };
    const complete = async (fileId: string, bytes: Buffer) => {
      const answer = await api('PUT', `/api/v2.6/files/file/${encodeURIComponent(fileId)}/complete`);
      const size = answer.status === 200 ? (JSON.parse(answer.body) as { status: { size?: number } }).status.size : undefined;
      if (size !== bytes.length) throw new Error(`complete: ${answer.status} ${answer.body}`);
    };
    /** The transfer alone, timed, and the product's CPU over it (kept unless it is a warm-up). */
    const timed = async (way: Way | undefined, bytes: Buffer, transfer: () => Promise<void>) => {
      execFileSync('sync');
      const cpu = treeCpuSeconds(product.pid);
      const started = performance.now();
      await transfer();
      way?.mbps.push(mbps(bytes.length, performance.now() - started));
      way?.cpuPerGiB.push(((treeCpuSeconds(product.pid) - cpu) * 1024 * MiB) / bytes.length);
    };
    const single: Way = { mbps: [], cpuPerGiB: [] };
    const tus: Way = { mbps: [], cpuPerGiB: [] };

    const viaPut = async (name: string, bytes: Buffer, way?: Way) => {
      const { fileId, contentUrl } = await begin(name);
      const url = new URL(contentUrl);
      const port = store === 'local' ? product.apiPort : Number(url.port);
      await timed(way, bytes, async () => {
        const headers = { Host: url.host, 'Content-Length': String(bytes.length), 'x-amz-server-side-encryption': 'AES256' };
        const put = await call(port, 'PUT', `${url.pathname}${url.search}`, headers, bytes);
        if (put.status !== 200) throw new Error(`PUT: ${put.status} ${put.body}`);
      });
      await complete(fileId, bytes);
    };
    const viaTus = async (name: string, bytes: Buffer, way?: Way) => {
      const { fileId } = await begin(name);
      const tusHeaders = { 'Tus-Resumable': '1.0.0' };
      await timed(way, bytes, async () => {
        const created = await api('POST', '/api/v2.6/files/tus', {
          ...tusHeaders,
          'Upload-Length': String(bytes.length),
          'Upload-Metadata': `fileId ${b64(fileId)},filetype ${b64('application/octet-stream')}`,
        });
        if (created.status !== 201) throw new Error(`tus creation: ${created.status} ${created.body}`);
        const upload = new URL(String(created.headers.location));
        const step = chunk > 0 ? chunk : bytes.length;
        for (let offset = 0; offset < bytes.length; offset += step) {
          const part = bytes.subarray(offset, Math.min(bytes.length, offset + step));
          const patch = await call(
            product.apiPort,
            'PATCH',
            upload.pathname,
            { ...tusHeaders, Host: upload.host, 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': String(offset) },
            part,
          );
          if (patch.status !== 204) throw new Error(`tus PATCH at ${offset}: ${patch.status} ${patch.body}`);
        }
      });
      await complete(fileId, bytes);
    };

    log(`${store}: warming up with one small file each way`);
    await viaPut('warm-put.bin', data.subarray(0, MiB));
    await viaTus('warm-tus.bin', data.subarray(0, MiB));
    for (let round = 0; round < rounds; round++) {
      log(`${store}: round ${round + 1} of ${rounds}, ${data.length / MiB} MiB each way`);
      const put = () => viaPut(`round-${round}-put.bin`, data, single);
      const resumable = () => viaTus(`round-${round}-tus.bin`, data, tus);
      for (const way of round % 2 === 0 ? [put, resumable] : [resumable, put]) await way();
    }
    const ratio = median(tus.mbps) / median(single.mbps);
    return {
      store,
      path: store === 'local' ? 'through nginx' : 'direct (PUT to the store, tus to the gateway)',
      mib: data.length / MiB,
      single: { MBps: median(single.mbps), cpuSecondsPerGiB: median(single.cpuPerGiB) },
      tus: { MBps: median(tus.mbps), cpuSecondsPerGiB: median(tus.cpuPerGiB) },
      ratio,
      met: ratio >= TARGET,
    };
  } finally {
    await teardown.run();
  }
}

function markdown(figures: StoreFigure[], chunk: number): string {
  const lines = [
    `Resumable upload (tus, ${chunk > 0 ? `PATCHes of ${chunk} MiB` : 'one PATCH'}) against the single signed PUT, ${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1)}`,
    '',
    '| store | path | MiB | single PUT MB/s | tus MB/s | tus / PUT | product CPU s per GiB, PUT / tus | target 0.8 |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const f of figures) {
    lines.push(
      `| ${f.store} | ${f.path} | ${f.mib} | ${f.single.MBps.toFixed(0)} | ${f.tus.MBps.toFixed(0)} | ${f.ratio.toFixed(2)} | ${f.single.cpuSecondsPerGiB.toFixed(2)} / ${f.tus.cpuSecondsPerGiB.toFixed(2)} | ${f.met ? 'met' : 'missed'} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const mib = arg('mib', 1024);
  const rounds = arg('rounds', 3);
  const chunk = arg('chunk-mib', 0) * MiB;
  const at = process.argv.indexOf('--store');
  const stores: Store[] = at >= 0 ? [process.argv[at + 1] as Store] : ['local', 's3'];
  const unknown = stores.find((store) => !['local', 's3', 'rgw'].includes(store));
  if (unknown !== undefined) throw new Error(`--store: local, s3 (Swift) or rgw (Ceph), not ${unknown}`);
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'pds-bench-tus-'));
  try {
    log(`${mib} MiB of random bytes, ${rounds} rounds per store`);
    const data = randomBytes(mib * MiB);
    const figures: StoreFigure[] = [];
    for (const store of stores) figures.push(await measureStore(store, data, rounds, chunk, workDir));
    console.log(markdown(figures, chunk / MiB));
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(`the resumable bench failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
