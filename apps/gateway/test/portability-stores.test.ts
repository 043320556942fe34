// An export archive streamed into each store and read back from it, as the export and import jobs will:
// written with the store's streaming write (a multipart upload on S3), verified, then read again to
// restore, with every file's bytes as they went in. A failed export leaves nothing behind.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { loadConfig } from '@pds/config';
import { createBlobStore, LocalBlobStore, type BlobStore } from '@pds/storage';
import { requireEnv } from '../../../test/support/gateway';
import { readArchive, verifyArchive } from '../src/portability/reader';
import { storeArchive } from '../src/portability/writer';
import { sampleInstance, sha256, sourceOf } from './portability-fixtures';

const MiB = 1024 * 1024;

async function localStore(): Promise<{ store: BlobStore; close(): void }> {
  const dir = mkdtempSync(path.join(process.env.TEST_DATA_DIR ?? os.tmpdir(), 'export-store-'));
  const store = new LocalBlobStore({ dir, masterKey: randomBytes(32), maxBytes: MiB });
  await store.init();
  return { store, close: () => rmSync(dir, { recursive: true, force: true }) };
}

async function s3Store(): Promise<{ store: BlobStore; close(): void }> {
  const config = loadConfig({
    STORAGE: 's3',
    S3_ENDPOINT: requireEnv('TEST_S3_ENDPOINT'),
    S3_ACCESS_KEY: requireEnv('TEST_S3_ACCESS_KEY'),
    S3_SECRET_KEY: requireEnv('TEST_S3_SECRET_KEY'),
    S3_REGION: requireEnv('TEST_S3_REGION'),
    S3_BUCKET: 'pds-export-archives',
  });
  return { store: await createBlobStore({ ...config, MASTER_KEY: randomBytes(32) }), close: () => undefined };
}

async function* body(store: BlobStore, key: string): AsyncGenerator<Buffer> {
  const blob = await store.read(key);
  if (!blob) throw new Error(`no object ${key}`);
  yield* blob.stream as AsyncIterable<Buffer>;
}

describe.each([
  ['local', localStore],
  ['s3', s3Store],
] as const)('an export archive in the %s store', (_name, open) => {
  let subject: { store: BlobStore; close(): void };
  const prefix = `a${randomBytes(5).toString('hex')}.pds.test/exports/`;

  beforeAll(async () => {
    subject = await open();
  });
  afterAll(() => subject?.close());

  it('is written as a stream, verifies, and gives back every file byte for byte', async () => {
    // Larger than two S3 parts, and than the local store's upload limit: server-side writes have none.
    const sample = sampleInstance(20 * MiB + 5);
    const key = `${prefix}full.tar.gz`;
    const { manifest, bytes } = await storeArchive(subject.store, key, sourceOf(sample));
    expect(await subject.store.stat(key)).toBe(bytes);
    expect(bytes).toBeGreaterThan(20 * MiB);

    expect(await verifyArchive(body(subject.store, key))).toEqual({ ok: true, manifest });

    const restored = new Map<string, string>();
    let last: string | undefined;
    for await (const part of readArchive(body(subject.store, key))) {
      last = part.kind;
      if (part.kind !== 'file' || !part.content) continue;
      const chunks: Buffer[] = [];
      for await (const chunk of part.content) chunks.push(chunk);
      restored.set(part.file.fileId, sha256(Buffer.concat(chunks)));
    }
    expect(last).toBe('end');
    expect(Object.fromEntries(restored)).toEqual(
      Object.fromEntries(sample.files.filter((f) => f.bytes).map((f) => [f.fileId, sha256(f.bytes as Buffer)])),
    );
  }, 120_000);

  it('stores nothing when the export fails midway', async () => {
    const source = sourceOf(sampleInstance(10));
    const key = `${prefix}failed.tar.gz`;
    source.files = (async function* () {
      const file = sampleInstance(10).files[0] as ReturnType<typeof sampleInstance>['files'][number];
      const { bytes: _bytes, ...metadata } = file;
      async function* failing(): AsyncGenerator<Buffer> {
        yield randomBytes(9 * MiB);
        throw new Error('store read failed');
      }
      yield { file: metadata, content: async () => ({ size: 10 * MiB, contentType: 'x/y', stream: Readable.from(failing()) }) };
    })();
    await expect(storeArchive(subject.store, key, source)).rejects.toThrow('store read failed');
    expect(await subject.store.stat(key)).toBeNull();
  }, 60_000);
});
