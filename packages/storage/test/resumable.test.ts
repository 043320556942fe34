// Resumable writes on both stores (the local disk, and the S3 server test/global-setup.ts provides):
// bytes sent over several calls of any size come back whole; an append never committed is dropped, and
// its replacement is what the object holds; an abort leaves nothing behind, neither parts nor tails nor
// files; an object in records is read, listed and stat-ed like any other, and never served altered.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'minio';
import { requireEnv } from '../../../test/support/gateway';
import { CuttingProxy } from '../../../test/support/cutting-proxy';
import { tamperAt } from '../../../test/support/tamper';
import { LocalBlobStore, S3BlobStore, type BlobStore, type ResumableState } from '../src';
import { partBytesFor, tailPrefix } from '../src/s3-resumable';

const MiB = 1024 * 1024;
/** S3's part size for these uploads (S3 takes no part under 5 MiB but the last). */
const PART = partBytesFor(1);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function* chunked(bytes: Buffer, size = 256 * 1024): AsyncGenerator<Buffer> {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

async function readBack(store: BlobStore, key: string): Promise<Buffer> {
  const blob = await store.read(key);
  if (!blob) throw new Error(`no object ${key}`);
  const chunks: Buffer[] = [];
  for await (const chunk of blob.stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const ref = () => randomBytes(32).toString('hex');

interface Subject {
  store: BlobStore;
  /** The same store as it would judge addresses `seconds` from now. */
  later(seconds: number): BlobStore;
  /** What is left of the upload's write in the store besides objects: multipart uploads, tail objects, partial files. */
  leftovers(key: string, ref: string): Promise<string[]>;
  close(): Promise<void>;
}

async function localSubject(): Promise<Subject> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'resumable-'));
  const masterKey = randomBytes(32);
  const store = new LocalBlobStore({ dir, masterKey, maxBytes: 64 * MiB });
  await store.init();
  return {
    store,
    later: (seconds) => new LocalBlobStore({ dir, masterKey, maxBytes: 64 * MiB, now: () => Date.now() + seconds * 1000 }),
    leftovers: async () => readdirSync(path.join(dir, 'uploads')),
    close: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function s3Subject(): Promise<Subject> {
  const settings = {
    endpoint: requireEnv('TEST_S3_ENDPOINT'),
    accessKey: requireEnv('TEST_S3_ACCESS_KEY'),
    secretKey: requireEnv('TEST_S3_SECRET_KEY'),
    region: process.env.TEST_S3_REGION ?? 'us-east-1',
    bucket: `resumable-${randomBytes(6).toString('hex')}`,
  };
  const store = new S3BlobStore(settings);
  await store.ensureBucket();
  const url = new URL(settings.endpoint);
  const client = new Client({
    endPoint: url.hostname,
    port: Number(url.port),
    useSSL: false,
    accessKey: settings.accessKey,
    secretKey: settings.secretKey,
    region: settings.region,
    pathStyle: true,
  });
  return {
    store,
    later: (seconds) => new S3BlobStore({ ...settings, now: () => new Date(Date.now() + seconds * 1000) }),
    leftovers: async (key, upload) => {
      const uploads = await client.listIncompleteUploadsQuery(settings.bucket, key, '', '', '/');
      const tails: string[] = [];
      for await (const object of store.list(tailPrefix(key, upload))) tails.push(object.key);
      return [...uploads.uploads.map((u) => `upload ${u.key} ${u.uploadId}`), ...tails];
    },
    close: async () => {
      await store.removePrefix('alice.pds.test/');
      await client.removeBucket(settings.bucket);
    },
  };
}

describe.each([
  ['local', localSubject],
  ['s3', s3Subject],
])('resumable writes on the %s store', (_name, start) => {
  let subject: Subject;
  beforeAll(async () => {
    subject = await start();
  });
  afterAll(() => subject.close());

  it('stores bytes sent over several appends of any size, and serves them back whole', async () => {
    const { store } = subject;
    const key = 'alice.pds.test/video.mp4';
    const upload = ref();
    // Appends around S3's part size: a whole part and a bit, less than a part, several parts, a few bytes.
    const sizes = [PART + MiB + 3, 2 * MiB, 2 * PART + MiB + 11, 5];
    const bytes = randomBytes(sizes.reduce((a, b) => a + b));
    let state = await store.beginResumable(key, upload, { length: bytes.length, contentType: 'video/mp4' });
    const committed: ResumableState[] = [];
    for (const size of sizes) {
      const before = state;
      state = await store.appendResumable(key, upload, state, chunked(bytes.subarray(state.offset, state.offset + size)), {
        durable: async (s) => void committed.push(s),
      });
      await store.releaseResumable(key, upload, before, state);
      expect(state.offset).toBe(before.offset + size);
    }
    await store.finishResumable(key, upload, state);
    expect(await store.stat(key)).toBe(bytes.length);
    expect(sha256(await readBack(store, key))).toBe(sha256(bytes));
    const blob = await store.read(key);
    expect(blob?.contentType).toBe('video/mp4');
    blob?.stream.destroy();
    expect(await subject.leftovers(key, upload)).toEqual([]);
  });

  it('drops an append that was never committed, and keeps the one that replaced it', async () => {
    const { store } = subject;
    const key = 'alice.pds.test/refused.bin';
    const upload = ref();
    const bytes = randomBytes(12 * MiB + 5);
    const begun = await store.beginResumable(key, upload, { length: bytes.length });
    const first = await store.appendResumable(key, upload, begun, chunked(bytes.subarray(0, 3 * MiB)));
    await store.releaseResumable(key, upload, begun, first);
    // The next request's bytes arrive altered and are refused: its state is dropped, not committed.
    const altered = Buffer.from(bytes.subarray(3 * MiB, 11 * MiB));
    altered[100] = (altered[100] as number) ^ 1;
    const refused = await store.appendResumable(key, upload, first, chunked(altered));
    await store.releaseResumable(key, upload, refused, first);
    const resent = await store.appendResumable(key, upload, first, chunked(bytes.subarray(3 * MiB)));
    await store.releaseResumable(key, upload, first, resent);
    await store.finishResumable(key, upload, resent);
    expect(sha256(await readBack(store, key))).toBe(sha256(bytes));
    expect(await subject.leftovers(key, upload)).toEqual([]);
  });

  it('finishes an empty object', async () => {
    const { store } = subject;
    const key = 'alice.pds.test/empty.txt';
    const upload = ref();
    await store.finishResumable(key, upload, await store.beginResumable(key, upload, { length: 0 }));
    expect(await store.stat(key)).toBe(0);
    expect((await readBack(store, key)).length).toBe(0);
  });

  it('leaves nothing of an aborted write: no parts, no tail, no file', async () => {
    const { store } = subject;
    const key = 'alice.pds.test/abandoned.bin';
    const upload = ref();
    const begun = await store.beginResumable(key, upload, { length: PART + 2 * MiB });
    const state = await store.appendResumable(key, upload, begun, chunked(randomBytes(PART + MiB)));
    expect(await subject.leftovers(key, upload)).not.toEqual([]);
    await store.abortResumable(key, upload, state);
    await store.abortResumable(key, upload, state);
    expect(await subject.leftovers(key, upload)).toEqual([]);
    expect(await store.stat(key)).toBeNull();
  });

  it('answers which key a signed upload address grants, and nothing for an altered one', async () => {
    const { store } = subject;
    const key = 'alice.pds.test/photo.jpg';
    const address = await store.presignPut(key, { ttlSeconds: 300, baseUrl: 'http://alice.pds.test' });
    expect(store.uploadKey(address)).toBe(key);
    const get = await store.presignGet(key, { ttlSeconds: 300, baseUrl: 'http://alice.pds.test' });
    expect(store.uploadKey(get)).toBeNull();
    const tampered = tamperAt(address);
    expect(store.uploadKey(tampered)).toBeNull();
    // S3's addresses name the key in their path; the local store's inside their signed token.
    if (address.includes('photo.jpg')) expect(store.uploadKey(address.replace('photo.jpg', 'other.jpg'))).toBeNull();
    expect(store.uploadKey('not an address')).toBeNull();
  });

  it('grants nothing with an upload address once it expired', async () => {
    const key = 'alice.pds.test/late.jpg';
    const address = await subject.store.presignPut(key, { ttlSeconds: 300, baseUrl: 'http://alice.pds.test' });
    const later = subject.later(301);
    expect(later.uploadKey(address)).toBeNull();
    expect(subject.later(299).uploadKey(address)).toBe(key);
  });
});

describe('a part whose stream to S3 was dropped', () => {
  it('is sent again whole from the bytes the gateway held, and the object comes back whole', async () => {
    const endpoint = new URL(requireEnv('TEST_S3_ENDPOINT'));
    const proxy = await CuttingProxy.start();
    proxy.forwardTo(Number(endpoint.port));
    const store = new S3BlobStore({
      endpoint: `http://127.0.0.1:${proxy.port}`,
      accessKey: requireEnv('TEST_S3_ACCESS_KEY'),
      secretKey: requireEnv('TEST_S3_SECRET_KEY'),
      region: process.env.TEST_S3_REGION ?? 'us-east-1',
      bucket: `resumable-${randomBytes(6).toString('hex')}`,
    });
    try {
      await store.ensureBucket();
      const key = 'alice.pds.test/dropped.bin';
      const upload = ref();
      const bytes = randomBytes(PART + 3 * MiB);
      const begun = await store.beginResumable(key, upload, { length: bytes.length });
      let cuts = 0;
      // Halfway through the first part the connection to the store drops (the store's own idle timeout, a
      // restarted proxy), while the client's bytes keep coming.
      async function* droppedMidPart(): AsyncGenerator<Buffer> {
        for await (const chunk of chunked(bytes)) {
          if (cuts === 0 && proxy.upstreamBytes >= PART / 2) cuts = proxy.cut();
          yield chunk;
        }
      }
      const state = await store.appendResumable(key, upload, begun, droppedMidPart());
      expect(cuts).toBeGreaterThan(0);
      expect(state.offset).toBe(bytes.length);
      await store.finishResumable(key, upload, state);
      expect(sha256(await readBack(store, key))).toBe(sha256(bytes));
      // The first part went twice: half of it streamed before the drop, then all of it again.
      expect(proxy.upstreamBytes).toBeGreaterThan(bytes.length + PART / 2);
    } finally {
      await store.removePrefix('alice.pds.test/');
      await proxy.close();
    }
  });
});

describe('an object in records on the local store', () => {
  let dir: string;
  let store: LocalBlobStore;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'records-'));
    store = new LocalBlobStore({ dir, masterKey: randomBytes(32), maxBytes: 64 * MiB });
    await store.init();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function written(key: string, bytes: Buffer): Promise<string> {
    const upload = ref();
    const state = await store.appendResumable(
      key,
      upload,
      await store.beginResumable(key, upload, { length: bytes.length }),
      chunked(bytes),
    );
    await store.finishResumable(key, upload, state);
    const [file] = readdirSync(dir, { recursive: true, withFileTypes: true }).filter(
      (e) =>
        e.isFile() &&
        /^[0-9a-f]{64}$/.test(e.name) &&
        !e.parentPath.endsWith('uploads') &&
        readFileSync(path.join(e.parentPath, e.name)).subarray(0, 4).toString() === 'PDB3',
    );
    return path.join(file!.parentPath, file!.name);
  }

  it('is listed with its size, and never served with a byte altered, a record dropped or its size changed', async () => {
    const bytes = randomBytes(3 * MiB + 17);
    const file = await written('alice.pds.test/records.bin', bytes);
    expect(await store.stat('alice.pds.test/records.bin')).toBe(bytes.length);
    const listed: { key: string; size: number }[] = [];
    for await (const object of store.list('alice.pds.test/')) listed.push({ key: object.key, size: object.size });
    expect(listed).toEqual([{ key: 'alice.pds.test/records.bin', size: bytes.length }]);
    const original = readFileSync(file);
    const alter = async (change: (copy: Buffer) => Buffer) => {
      writeFileSync(file, change(Buffer.from(original)));
      await expect(readBack(store, 'alice.pds.test/records.bin')).rejects.toThrow(/integrity|truncated|altered/);
    };
    await alter((copy) => {
      copy[copy.length - 100]! ^= 1;
      return copy;
    });
    // The last record (17 bytes, its head and tag) cut off.
    await alter((copy) => copy.subarray(0, copy.length - (17 + 32)));
    // The size in the header made to match a shorter object.
    await alter((copy) => {
      copy.writeBigUInt64BE(BigInt(3 * MiB), 4);
      return copy.subarray(0, copy.length - (17 + 32));
    });
    writeFileSync(file, original);
    expect(sha256(await readBack(store, 'alice.pds.test/records.bin'))).toBe(sha256(bytes));
  });

  it('is removed with its prefix, and so is an upload still under way there', async () => {
    const upload = ref();
    await store.beginResumable('alice.pds.test/under-way.bin', upload, { length: 10 });
    await store.beginResumable('bob.pds.test/other.bin', ref(), { length: 10 });
    expect(await store.removePrefix('alice.pds.test/')).toBeGreaterThan(0);
    expect(readdirSync(path.join(dir, 'uploads'))).toHaveLength(1);
  });

  it('removes the files of uploads idle too long that no live upload keeps', async () => {
    const [kept, dropped] = [ref(), ref()];
    await store.beginResumable('carol.pds.test/a.bin', kept, { length: 10 });
    await store.beginResumable('carol.pds.test/b.bin', dropped, { length: 10 });
    const live = async (refs: string[]) => new Set(refs.filter((r) => r === kept));
    expect(await store.removeAbandonedResumables(live, Date.now() - 60_000)).toBe(0);
    expect(await store.removeAbandonedResumables(live, Date.now() + 1000)).toBeGreaterThanOrEqual(1);
    const left = readdirSync(path.join(dir, 'uploads'));
    expect(left).toContain(kept);
    expect(left).not.toContain(dropped);
  });
});
