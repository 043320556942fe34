// The server-side half of the BlobStore contract, on both adapters: streaming writes and reads, listing
// and removing by prefix (what exports, imports and purges use). The local store runs on its own folder;
// S3 against the real server test/global-setup.ts provides.
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'minio';
import { loadConfig } from '@pds/config';
import { requireEnv } from '../../../test/support/gateway';
import { BlobTooLargeError, createBlobStore, LocalBlobStore, removeOrphans, type BlobStore } from '../src';
import { deriveKey } from '../src/keys';

const MiB = 1024 * 1024;

interface Subject {
  store: BlobStore;
  close(): void;
}

function localSubject(): Subject & { dir: string; masterKey: Buffer } {
  const dir = mkdtempSync(path.join(process.env.TEST_DATA_DIR ?? os.tmpdir(), 'streams-'));
  const masterKey = randomBytes(32);
  const store = new LocalBlobStore({ dir, masterKey, maxBytes: MiB });
  return { store, dir, masterKey, close: () => rmSync(dir, { recursive: true, force: true }) };
}

function s3Options() {
  return {
    endpoint: requireEnv('TEST_S3_ENDPOINT'),
    accessKey: requireEnv('TEST_S3_ACCESS_KEY'),
    secretKey: requireEnv('TEST_S3_SECRET_KEY'),
    region: requireEnv('TEST_S3_REGION'),
    bucket: 'pds-storage-streams',
  };
}

async function s3Subject(): Promise<Subject> {
  const o = s3Options();
  const config = loadConfig({
    STORAGE: 's3',
    S3_ENDPOINT: o.endpoint,
    S3_ACCESS_KEY: o.accessKey,
    S3_SECRET_KEY: o.secretKey,
    S3_REGION: o.region,
    S3_BUCKET: o.bucket,
  });
  // The S3 store uses no master key; every process that opens a store has one.
  return { store: await createBlobStore({ ...config, MASTER_KEY: randomBytes(32) }), close: () => undefined };
}

/** A raw client on the same bucket, to see what the store's API does not show (unfinished uploads). */
function rawS3(): Client {
  const o = s3Options();
  const url = new URL(o.endpoint);
  return new Client({
    endPoint: url.hostname,
    port: Number(url.port),
    useSSL: url.protocol === 'https:',
    accessKey: o.accessKey,
    secretKey: o.secretKey,
    region: o.region,
    pathStyle: true,
  });
}

async function* chunked(bytes: Buffer, size = 64 * 1024): AsyncGenerator<Buffer> {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

async function* failingAfter(bytes: Buffer): AsyncGenerator<Buffer> {
  yield* chunked(bytes);
  throw new Error('source failed');
}

async function readAll(store: BlobStore, key: string): Promise<Buffer | null> {
  const blob = await store.read(key);
  if (!blob) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of blob.stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function keysUnder(store: BlobStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of store.list(prefix)) keys.push(object.key);
  return keys.sort();
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe.each([
  ['local', async () => localSubject()],
  ['s3', s3Subject],
] as const)('BlobStore streams: %s', (_name, start) => {
  let s: Subject;
  /** An instance address of its own per run: the S3 bucket outlives runs. */
  let address: string;

  beforeAll(async () => {
    s = await start();
    if (s.store instanceof LocalBlobStore) await s.store.init();
    address = `a${randomBytes(5).toString('hex')}.pds.test`;
  });
  afterAll(() => s?.close());

  it('stores a stream and reads it back byte for byte, with its size and content type', async () => {
    const bytes = randomBytes(300_001);
    const key = `${address}/small.bin`;
    expect(await s.store.write(key, chunked(bytes), { contentType: 'image/png' })).toBe(bytes.length);
    expect(await s.store.stat(key)).toBe(bytes.length);
    const blob = await s.store.read(key);
    expect(blob?.size).toBe(bytes.length);
    expect(blob?.contentType).toBe('image/png');
    blob?.stream.destroy();
    expect((await readAll(s.store, key))?.equals(bytes)).toBe(true);
  });

  it('stores a stream larger than one S3 part (a multipart upload there) without changing a byte', async () => {
    const bytes = randomBytes(17 * MiB + 3);
    const key = `${address}/large.bin`;
    expect(await s.store.write(key, chunked(bytes, 1000 * 1000))).toBe(bytes.length);
    expect(await s.store.stat(key)).toBe(bytes.length);
    expect(sha256((await readAll(s.store, key)) as Buffer)).toBe(sha256(bytes));
  }, 120_000);

  it('stores an empty stream as an empty object, typed application/octet-stream by default', async () => {
    const key = `${address}/empty`;
    expect(await s.store.write(key, chunked(Buffer.alloc(0)))).toBe(0);
    expect(await s.store.stat(key)).toBe(0);
    const blob = await s.store.read(key);
    expect(blob?.contentType).toBe('application/octet-stream');
    blob?.stream.destroy();
    expect((await readAll(s.store, key))?.length).toBe(0);
  });

  it('replaces an object with the bytes of the latest write', async () => {
    const key = `${address}/replaced`;
    await s.store.write(key, chunked(randomBytes(1000)));
    const latest = randomBytes(10);
    await s.store.write(key, chunked(latest), { contentType: 'text/plain' });
    expect((await readAll(s.store, key))?.equals(latest)).toBe(true);
  });

  it('answers null for reading an object that is not there', async () => {
    expect(await s.store.read(`${address}/missing`)).toBeNull();
  });

  it('stores nothing when the source fails midway, in one part or in several', async () => {
    for (const size of [1000, 9 * MiB]) {
      const key = `${address}/failed-${size}`;
      await expect(s.store.write(key, failingAfter(randomBytes(size)))).rejects.toThrow('source failed');
      expect(await s.store.stat(key)).toBeNull();
    }
  }, 60_000);

  it('refuses a source longer than maxBytes with BlobTooLargeError and stores nothing, and takes one of exactly maxBytes', async () => {
    const over = `${address}/over`;
    await expect(s.store.write(over, chunked(randomBytes(1001)), { maxBytes: 1000 })).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(await s.store.stat(over)).toBeNull();
    const exact = `${address}/exact`;
    expect(await s.store.write(exact, chunked(randomBytes(1000)), { maxBytes: 1000 })).toBe(1000);
  });

  it('lists the objects under a prefix, with sizes, and nothing of another instance or outside the prefix', async () => {
    const other = `b${address}`;
    const put = (key: string, size: number) => s.store.write(key, chunked(randomBytes(size)));
    await put(`${address}/exports/one.tar.gz`, 5);
    await put(`${address}/exports/two.tar.gz`, 7);
    await put(`${address}/exportsnot`, 1);
    await put(`${other}/exports/three.tar.gz`, 1);
    const listed: Record<string, number> = {};
    for await (const object of s.store.list(`${address}/exports/`)) {
      listed[object.key] = object.size;
      expect(object.lastModified.getTime()).toBeGreaterThan(Date.now() - 3_600_000);
    }
    expect(listed).toEqual({ [`${address}/exports/one.tar.gz`]: 5, [`${address}/exports/two.tar.gz`]: 7 });
    expect(await keysUnder(s.store, `${other}/`)).toEqual([`${other}/exports/three.tar.gz`]);
    // A prefix that ends inside the first segment spans instances.
    expect(await keysUnder(s.store, address.slice(0, -1))).toContain(`${address}/exportsnot`);
    expect(await keysUnder(s.store, `${address}/nothing-here/`)).toEqual([]);
  });

  it('removes every object under a prefix and nothing else; again, it removes none', async () => {
    const victim = `v${address}`;
    const survivor = `w${address}`;
    for (const key of [`${victim}/f1`, `${victim}/exports/x.tar.gz`, `${survivor}/f1`]) await s.store.write(key, chunked(randomBytes(3)));
    expect(await s.store.removePrefix(`${victim}/`)).toBe(2);
    expect(await keysUnder(s.store, `${victim}/`)).toEqual([]);
    expect(await s.store.stat(`${victim}/f1`)).toBeNull();
    expect(await s.store.stat(`${survivor}/f1`)).toBe(3);
    expect(await s.store.removePrefix(`${victim}/`)).toBe(0);
  });

  it('refuses to remove by an empty prefix', async () => {
    await expect(s.store.removePrefix('')).rejects.toThrow('needs a prefix');
  });
});

describe('S3 streams: what its listing does not show', () => {
  let store: BlobStore;
  const raw = rawS3();
  const { bucket } = s3Options();
  const address = `m${randomBytes(5).toString('hex')}.pds.test`;

  /** Keys of unfinished uploads one level under `prefix` (a `/` delimiter: Swift mishandles an empty one). */
  async function unfinished(prefix: string): Promise<string[]> {
    return (await raw.listIncompleteUploadsQuery(bucket, prefix, '', '', '/')).uploads.map((upload) => upload.key);
  }

  beforeAll(async () => {
    store = (await s3Subject()).store;
  });

  it('leaves no unfinished upload behind a write whose source failed after several parts', async () => {
    const key = `${address}/cut.bin`;
    await expect(store.write(key, failingAfter(randomBytes(17 * MiB)))).rejects.toThrow('source failed');
    expect(await unfinished(`${address}/`)).toEqual([]);
  }, 60_000);

  it('drops the parts of a write cut short by a killed process when its prefix is removed', async () => {
    const key = `${address}/killed.bin`;
    // What a write leaves when its process dies between two parts.
    const uploadId = await raw.initiateNewMultipartUpload(bucket, key, {});
    await raw.uploadPart({ bucketName: bucket, objectName: key, uploadID: uploadId, partNumber: 1, headers: {} }, randomBytes(5 * MiB));
    expect(await unfinished(`${address}/`)).toEqual([key]);
    await store.removePrefix(`${address}/`);
    expect(await unfinished(`${address}/`)).toEqual([]);
  }, 60_000);

  it('keeps objects of more than two segments (export archives) out of the orphan sweep', async () => {
    const archive = `${address}/exports/kept.tar.gz`;
    const orphan = `${address}/orphan.bin`;
    for (const key of [archive, orphan]) await store.write(key, chunked(randomBytes(3)));
    // No file is live, and everything counts as old enough.
    expect(await removeOrphans(store, async () => [], new Date(Date.now() + 60_000))).toBeGreaterThanOrEqual(1);
    expect(await store.stat(orphan)).toBeNull();
    expect(await store.stat(archive)).toBe(3);
  });
});

describe('local store: objects of the first format', () => {
  let s: ReturnType<typeof localSubject>;

  beforeAll(async () => {
    s = localSubject();
    await (s.store as LocalBlobStore).init();
  });
  afterAll(() => s.close());

  /** A file as the first format wrote it: `PDB1 | IV | type length | type | ciphertext | tag` at `<2 hex>/<SHA-256 of the key>`. */
  function writeFirstFormat(key: string, bytes: Buffer): void {
    const type = Buffer.from('text/plain');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', deriveKey(s.masterKey, 'local-blob-encryption'), iv);
    cipher.setAAD(Buffer.concat([Buffer.from(key), Buffer.from([0]), type]));
    const name = createHash('sha256').update(key).digest('hex');
    mkdirSync(path.join(s.dir, name.slice(0, 2)), { recursive: true });
    const body = Buffer.concat([cipher.update(bytes), cipher.final(), cipher.getAuthTag()]);
    writeFileSync(
      path.join(s.dir, name.slice(0, 2), name),
      Buffer.concat([Buffer.from('PDB1'), iv, Buffer.from([type.length]), type, body]),
    );
  }

  it('are still read, stat-ed and removed by key', async () => {
    const key = 'old.pds.test/kept.txt';
    const bytes = Buffer.from('written by an earlier version');
    writeFirstFormat(key, bytes);
    expect(await s.store.stat(key)).toBe(bytes.length);
    const blob = await s.store.read(key);
    expect(blob?.contentType).toBe('text/plain');
    blob?.stream.destroy();
    expect((await readAll(s.store, key))?.equals(bytes)).toBe(true);
    await s.store.remove(key);
    expect(await s.store.stat(key)).toBeNull();
  });

  it('are shadowed by a newer write of the same key, and removing the key removes both', async () => {
    const key = 'old.pds.test/rewritten.txt';
    writeFirstFormat(key, Buffer.from('old'));
    await s.store.write(key, chunked(Buffer.from('new')));
    expect((await readAll(s.store, key))?.toString()).toBe('new');
    await s.store.remove(key);
    expect(await s.store.read(key)).toBeNull();
  });
});
