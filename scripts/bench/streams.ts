// Upload and download through the local store (signed addresses served by the gateway) against the
// baseline writing the same bytes to a file with one fsync, and reading them back, on the same disk.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { call } from './client';

export interface StreamFigure {
  mib: number;
  uploadMBps: { product: number; baseline: number };
  downloadMBps: { product: number; baseline: number };
  /** The disk alone, for context: one write + fsync and one read of the same bytes from this process. */
  diskMBps: { write: number; read: number };
}

/**
 * A 1 MiB transfer takes a few milliseconds, so one of them per round is mostly scheduling noise on a
 * shared machine: small sizes repeat the transfer (product and baseline alternately) until a round has
 * moved this much, and the figure is the median over every transfer.
 */
const MIB_PER_ROUND = 16;
/** Large sizes take too few transfers for a median otherwise. */
const MIN_TRANSFERS = 5;

/**
 * Writes everything dirty to the disk before a timed upload. Each upload ends with an fsync, and on
 * ext4 an fsync also waits for whatever else is queued for the disk: without this, each transfer pays
 * for the writeback of the one before it (the product's for the baseline's and the other way round),
 * which swung the same code's 64 MiB ratio between 0.5 and 1.6 from one run to the next.
 */
const settleDisk = () => execFileSync('sync');

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const mbps = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);

export async function measureStreams(options: {
  sizesMiB: number[];
  rounds: number;
  product: { port: number; host: string; token: string };
  baselinePort: number;
  /** A folder on the disk the product and the baseline write to. */
  diskDir: string;
}): Promise<StreamFigure[]> {
  const { product, baselinePort } = options;
  const auth = { Host: product.host, 'X-Auth-Token': product.token };
  const figures: StreamFigure[] = [];
  for (const mib of options.sizesMiB) {
    const data = randomBytes(mib * 1024 * 1024);
    const up = { product: [] as number[], baseline: [] as number[] };
    const down = { product: [] as number[], baseline: [] as number[] };
    const disk = { write: [] as number[], read: [] as number[] };
    /** The product: the three-step upload, then the content redirect and the signed GET. */
    const productTransfer = async (name: string): Promise<void> => {
      const upload = await call(
        product.port,
        'POST',
        '/api/v2.6/files/upload',
        { ...auth, 'Content-Type': 'application/json' },
        JSON.stringify({ name, source: 'bench' }),
      );
      if (upload.status !== 200) throw new Error(`upload start: ${upload.status} ${upload.body}`);
      const { fileId, contentUrl } = JSON.parse(upload.body) as { fileId: string; contentUrl: string };
      const putUrl = new URL(contentUrl);
      settleDisk();
      const put = await call(
        product.port,
        'PUT',
        putUrl.pathname,
        {
          Host: putUrl.host,
          'Content-Type': 'application/octet-stream',
          'Content-Length': String(data.length),
          'x-amz-server-side-encryption': 'AES256',
        },
        data,
      );
      if (put.status !== 200) throw new Error(`upload: ${put.status} ${put.body}`);
      up.product.push(mbps(data.length, put.ms));
      const complete = await call(product.port, 'PUT', `/api/v2.6/files/file/${fileId}/complete`, auth);
      if (complete.status !== 200) throw new Error(`complete: ${complete.status} ${complete.body}`);
      const redirect = await call(product.port, 'GET', `/api/v2.6/files/content/${fileId}`, auth);
      const getUrl = new URL(String(redirect.headers.location));
      const get = await call(product.port, 'GET', getUrl.pathname, { Host: getUrl.host }, undefined, { discardBody: true });
      if (get.status !== 200 || get.bytes !== data.length) throw new Error(`download: ${get.status}, ${get.bytes} bytes`);
      down.product.push(mbps(data.length, get.ms));
    };

    const baselineTransfer = async (name: string): Promise<void> => {
      const file = `/blob/${name}`;
      settleDisk();
      const bput = await call(baselinePort, 'PUT', file, { 'Content-Length': String(data.length) }, data);
      if (bput.status !== 200) throw new Error(`baseline upload: ${bput.status}`);
      up.baseline.push(mbps(data.length, bput.ms));
      const bget = await call(baselinePort, 'GET', file, {}, undefined, { discardBody: true });
      if (bget.bytes !== data.length) throw new Error(`baseline download: ${bget.bytes} bytes`);
      down.baseline.push(mbps(data.length, bget.ms));
    };

    const transfers = Math.max(MIN_TRANSFERS, options.rounds * Math.max(1, Math.round(MIB_PER_ROUND / mib)));
    for (let round = 0; round < transfers; round++) {
      const name = `stream-${mib}-${round}-${randomBytes(3).toString('hex')}.bin`;
      // Who goes first alternates, so neither always follows the other's transfers.
      const order = round % 2 === 0 ? [productTransfer, baselineTransfer] : [baselineTransfer, productTransfer];
      for (const transfer of order) await transfer(name);

      const plain = path.join(options.diskDir, `plain-${name}`);
      settleDisk();
      let started = performance.now();
      const handle = await open(plain, 'w');
      await handle.write(data);
      await handle.sync();
      await handle.close();
      disk.write.push(mbps(data.length, performance.now() - started));
      started = performance.now();
      await readFile(plain);
      disk.read.push(mbps(data.length, performance.now() - started));
      await rm(plain);
    }
    figures.push({
      mib,
      uploadMBps: { product: median(up.product), baseline: median(up.baseline) },
      downloadMBps: { product: median(down.product), baseline: median(down.baseline) },
      diskMBps: { write: median(disk.write), read: median(disk.read) },
    });
  }
  return figures;
}
