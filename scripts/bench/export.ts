// The export writer against `tar -czf` over the same files on the same disk, and the memory it adds.
// `pnpm bench --only export [--mib 256] [--level 6] [--rounds 3] [--records 0]` (or this file with tsx).
// Half the bytes are random (photos, videos: incompressible), half text-like (compresses ≈ 3×), in files
// of 32 MiB down to 64 KiB. The product reads each file from the local store (decrypting) and writes the
// archive into it (encrypting, one fsync); the baseline, always `tar -czf` (gzip's default level, 6;
// `--level` sets the product's), reads plain files and writes a plain .tar.gz, timed with and without an
// fsync of its output. Each export runs in a child process of its own, so its peak RSS minus its RSS
// before the export is what the export added. Then one import's reading of that archive (verify, then read
// back with every file written into the store and records gathered in batches, as the import job does
// without its database), in a child of its own too: its speed over the same input and its RSS growth.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { LocalBlobStore } from '@pds/storage';
import type { ExportRecord, ExportUser } from '../../apps/gateway/src/portability/format';
import { readArchive, verifyArchive } from '../../apps/gateway/src/portability/reader';
import { storeArchive, type FileToExport } from '../../apps/gateway/src/portability/writer';

const MiB = 1024 * 1024;
const ADDRESS = 'bench.pds.test';
const SIZES = [32 * MiB, 8 * MiB, MiB, 256 * 1024, 64 * 1024];

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

interface Plan {
  dir: string;
  masterKey: string;
  files: { fileId: string; size: number }[];
  records: number;
  level: number;
}

/** Text of small words with some numbers: compresses about as well as documents and JSON do. */
function textLike(size: number): Buffer {
  const words = ['the', 'data', 'store', 'alice', 'export', 'record', 'photo', 'note', 'value', 'river', 'run', 'book'];
  const seed = randomBytes(size);
  const out = Buffer.alloc(size);
  let at = 0;
  for (let i = 0; at < size; i++) {
    const word =
      (seed[i % size] as number) % 5 === 0 ? String(seed[i % size]) : (words[(seed[i % size] as number) % words.length] as string);
    at += out.write(`${word}${i % 17 === 0 ? '\n' : ' '}`, at);
  }
  return out;
}

/** Record `i` of `count`, in ten tables, ordered by table as the exporter reads them. */
function recordOf(i: number, count: number): ExportRecord {
  const id = createHash('md5').update(String(i)).digest('hex');
  return {
    namespace: 'bench',
    endpoint: `table${Math.floor((i * 10) / count)}`,
    recordId: `${id.slice(0, 8)}-${id.slice(8, 12)}-4${id.slice(13, 16)}-8${id.slice(17, 20)}-${id.slice(20, 32)}`,
    data: { text: `record ${i} about the river and a book`, value: i, tags: ['run', 'note'] },
    links: [],
    createdAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  };
}

/** Writes the files, plain for tar and into the local store for the export; records as NDJSON for tar too. */
async function prepare(totalMiB: number, records: number, level: number): Promise<Plan> {
  const dir = mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'pds-export-bench-'));
  const masterKey = randomBytes(32);
  const store = new LocalBlobStore({ dir: path.join(dir, 'blobs'), masterKey, maxBytes: Infinity });
  await store.init();
  mkdirSync(path.join(dir, 'plain'));
  const files: Plan['files'] = [];
  let total = 0;
  for (let i = 0; total < totalMiB * MiB; i++) {
    const size = Math.min(SIZES[i % SIZES.length] as number, totalMiB * MiB - total);
    const bytes = i % 2 === 0 ? randomBytes(size) : textLike(size);
    const fileId = `file${i}.bin`;
    writeFileSync(path.join(dir, 'plain', fileId), bytes);
    await store.write(`${ADDRESS}/${fileId}`, Readable.from([bytes]));
    files.push({ fileId, size });
    total += size;
  }
  if (records > 0) {
    const lines = Array.from({ length: records }, (_, i) => JSON.stringify(recordOf(i, records))).join('\n');
    writeFileSync(path.join(dir, 'plain', 'records.ndjson'), `${lines}\n`);
  }
  return { dir, masterKey: masterKey.toString('hex'), files, records, level };
}

/** In the child: one export, timed; prints its figures as JSON. */
async function exportOnce(plan: Plan): Promise<void> {
  const store = new LocalBlobStore({
    dir: path.join(plan.dir, 'blobs'),
    masterKey: Buffer.from(plan.masterKey, 'hex'),
    maxBytes: Infinity,
  });
  const at = new Date('2026-11-25T12:00:00.000Z');
  const owner: ExportUser = { username: 'bench', kind: 'owner', state: 'active', createdAt: at.toISOString() };
  const files = (async function* (): AsyncGenerator<FileToExport> {
    for (const { fileId } of plan.files) {
      yield {
        file: {
          fileId,
          name: fileId,
          source: 'bench',
          tags: [],
          dateCreated: at.toISOString(),
          lastUpdated: at.toISOString(),
          status: 'Completed',
          contentPublic: false,
          permissions: [],
        },
        content: () => store.read(`${ADDRESS}/${fileId}`),
      };
    }
  })();
  const records = (async function* () {
    for (let i = 0; i < plan.records; i++) yield recordOf(i, plan.records);
  })();
  const empty = (async function* () {})();
  const rssBefore = process.memoryUsage.rss();
  const started = performance.now();
  const { bytes } = await storeArchive(
    store,
    `${ADDRESS}/exports/bench.tar.gz`,
    {
      instance: ADDRESS,
      createdAt: at,
      users: (async function* () {
        yield owner;
      })(),
      apps: empty,
      bundles: empty,
      combinators: empty,
      debits: empty,
      files,
      links: empty,
      records,
      activity: empty,
    },
    { level: plan.level },
  );
  const ms = performance.now() - started;
  // maxRSS is in KiB: the peak of the whole process, reached during the export.
  const peak = process.resourceUsage().maxRSS * 1024;
  process.stdout.write(JSON.stringify({ ms, bytes, rssBefore, peak }));
}

/**
 * In the child: the import job's reading of the archive just exported, without its database: the whole
 * archive verified (every SHA-256), then read again with each file's bytes written back into the store
 * and the records gathered in batches of 500 as the restore writes them. Prints its figures as JSON.
 */
async function importOnce(plan: Plan): Promise<void> {
  const store = new LocalBlobStore({
    dir: path.join(plan.dir, 'blobs'),
    masterKey: Buffer.from(plan.masterKey, 'hex'),
    maxBytes: Infinity,
  });
  const archive = async function* () {
    const blob = await store.read(`${ADDRESS}/exports/bench.tar.gz`);
    if (!blob) throw new Error('no archive to import');
    yield* blob.stream as AsyncIterable<Buffer>;
  };
  const rssBefore = process.memoryUsage.rss();
  const started = performance.now();
  const report = await verifyArchive(archive());
  if (!report.ok) throw new Error(`the archive does not verify: ${report.message}`);
  let batch: unknown[] = [];
  for await (const part of readArchive(archive())) {
    if (part.kind === 'file' && part.content) await store.write(`${ADDRESS}/imported/${part.file.fileId}`, part.content);
    if (part.kind === 'record') batch.push(part.record);
    if (batch.length >= 500) batch = [];
  }
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ ms, rssBefore, peak: process.resourceUsage().maxRSS * 1024 }));
}

/**
 * CPU seconds (user + system) of this process's children that have ended and been waited for, with
 * theirs (tar's gzip is tar's child). On a machine shared with other work, wall time swings with the
 * load; CPU time much less.
 */
function childrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/** Wall milliseconds and CPU seconds of a run of child processes. */
function timed(run: () => void): { ms: number; cpu: number } {
  const [started, cpu] = [performance.now(), childrenCpuSeconds()];
  run();
  return { ms: performance.now() - started, cpu: childrenCpuSeconds() - cpu };
}

async function main(): Promise<void> {
  if (process.argv[2] === '--child') return exportOnce(JSON.parse(process.env.EXPORT_BENCH_PLAN as string) as Plan);
  if (process.argv[2] === '--import-child') return importOnce(JSON.parse(process.env.EXPORT_BENCH_PLAN as string) as Plan);
  const mib = arg('mib', 256);
  const level = arg('level', 6);
  const rounds = arg('rounds', 3);
  const records = arg('records', 0);
  console.error(`preparing ${mib} MiB of files${records ? ` and ${records} records` : ''}…`);
  const plan = await prepare(mib, records, level);
  const inputBytes =
    plan.files.reduce((sum, f) => sum + f.size, 0) + (records ? statSync(path.join(plan.dir, 'plain', 'records.ndjson')).size : 0);
  const product: { ms: number; cpu: number; bytes: number; growth: number }[] = [];
  const tar: { ms: number; cpu: number; synced: number; bytes: number }[] = [];
  let imported: { ms: number; growth: number } | undefined;
  try {
    for (let round = 0; round < rounds; round++) {
      // Dirty pages of the previous run would otherwise be written back during this one.
      execFileSync('sync');
      let child!: ReturnType<typeof spawnSync>;
      // The child's CPU includes its start-up and module loading, which the baseline does not have.
      const { cpu } = timed(() => {
        child = spawnSync(process.execPath, [...process.execArgv, __filename, '--child'], {
          env: { ...process.env, EXPORT_BENCH_PLAN: JSON.stringify(plan) },
          encoding: 'utf8',
          maxBuffer: 1024 * 1024,
        });
      });
      if (child.status !== 0) throw new Error(`export child failed: ${String(child.stderr)}`);
      const figures = JSON.parse(String(child.stdout)) as { ms: number; bytes: number; rssBefore: number; peak: number };
      product.push({ ms: figures.ms, cpu, bytes: figures.bytes, growth: figures.peak - figures.rssBefore });

      execFileSync('sync');
      const out = path.join(plan.dir, 'baseline.tar.gz');
      const { ms, cpu: tarCpu } = timed(() => execFileSync('tar', ['-czf', out, '-C', path.join(plan.dir, 'plain'), '.']));
      const synced = ms + timed(() => execFileSync('sync', [out])).ms;
      tar.push({ ms, cpu: tarCpu, synced, bytes: statSync(out).size });
      console.error(
        `round ${round + 1}: product ${figures.ms.toFixed(0)} ms (${cpu.toFixed(1)} s CPU), tar -czf ${ms.toFixed(0)} ms (${tarCpu.toFixed(1)} s CPU; with sync ${synced.toFixed(0)} ms)`,
      );
    }
    execFileSync('sync');
    const child = spawnSync(process.execPath, [...process.execArgv, __filename, '--import-child'], {
      env: { ...process.env, EXPORT_BENCH_PLAN: JSON.stringify(plan) },
      encoding: 'utf8',
      maxBuffer: 1024 * 1024,
    });
    if (child.status !== 0) throw new Error(`import child failed: ${String(child.stderr)}`);
    const figures = JSON.parse(String(child.stdout)) as { ms: number; rssBefore: number; peak: number };
    imported = { ms: figures.ms, growth: figures.peak - figures.rssBefore };
    console.error(`import (verify, then read back into the store; no database): ${figures.ms.toFixed(0)} ms`);
  } finally {
    rmSync(plan.dir, { recursive: true, force: true });
  }
  const mbps = (ms: number) => inputBytes / 1e6 / (ms / 1000);
  const productMs = median(product.map((p) => p.ms));
  const tarMs = median(tar.map((t) => t.ms));
  const syncedMs = median(tar.map((t) => t.synced));
  const summary = {
    inputMiB: +(inputBytes / MiB).toFixed(1),
    files: plan.files.length,
    records,
    level,
    rounds,
    productMBps: +mbps(productMs).toFixed(1),
    tarMBps: +mbps(tarMs).toFixed(1),
    tarSyncedMBps: +mbps(syncedMs).toFixed(1),
    ratio: +(tarMs / productMs).toFixed(2),
    ratioSynced: +(syncedMs / productMs).toFixed(2),
    productCpuSeconds: +median(product.map((p) => p.cpu)).toFixed(1),
    tarCpuSeconds: +median(tar.map((t) => t.cpu)).toFixed(1),
    archiveMiB: +(median(product.map((p) => p.bytes)) / MiB).toFixed(1),
    tarArchiveMiB: +(median(tar.map((t) => t.bytes)) / MiB).toFixed(1),
    rssGrowthMiB: +(Math.max(...product.map((p) => p.growth)) / MiB).toFixed(1),
    importMBps: imported ? +mbps(imported.ms).toFixed(1) : undefined,
    importRssGrowthMiB: imported ? +(imported.growth / MiB).toFixed(1) : undefined,
  };
  console.log(JSON.stringify(summary, null, 2));
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
