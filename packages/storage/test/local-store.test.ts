// The local store on its own: objects of every size around its 1 MiB read chunk come back byte for
// byte (the tag at the end of the file is never split between two reads), replacing an object leaves
// the new bytes, and an altered object never comes back whole.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalBlobStore } from '../src';

const MiB = 1024 * 1024;
/** magic (4) + IV (12) + type length (1) + 'application/octet-stream' (24) before the ciphertext, tag (16) after. */
const OVERHEAD = 4 + 12 + 1 + 24 + 16;

let dir: string;
let store: LocalBlobStore;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'local-store-'));
  store = new LocalBlobStore({ dir, masterKey: randomBytes(32), maxBytes: 8 * MiB });
  await store.init();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function* chunked(bytes: Buffer, size = 64 * 1024): AsyncGenerator<Buffer> {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

async function readBack(key: string): Promise<Buffer> {
  const blob = await store.read(key);
  if (!blob) throw new Error(`no object ${key}`);
  const chunks: Buffer[] = [];
  for await (const chunk of blob.stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function storedFiles(): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.parentPath.endsWith(`${path.sep}tmp`))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

it.each([
  ['empty', 0],
  ['one byte', 1],
  ['a file just under one read', MiB - OVERHEAD],
  ['a file whose tag would straddle two reads', MiB - OVERHEAD + 5],
  ['a file one tag past one read', MiB - OVERHEAD + 16],
  ['a file of three reads and a bit', 3 * MiB + 7],
])('stores %s (%i bytes) and serves it back byte for byte, with its size', async (_what, size) => {
  const bytes = randomBytes(size);
  const key = `alice.pds.test/size-${size}`;
  expect(await store.write(key, chunked(bytes))).toBe(size);
  expect(await store.stat(key)).toBe(size);
  const blob = await store.read(key);
  expect(blob?.size).toBe(size);
  blob?.stream.destroy();
  expect((await readBack(key)).equals(bytes)).toBe(true);
});

it('replaces an object with the bytes of the latest write and leaves no temp file', async () => {
  const key = 'alice.pds.test/replaced';
  await store.write(key, chunked(randomBytes(2 * MiB)));
  const latest = randomBytes(1000);
  await store.write(key, chunked(latest), { contentType: 'text/plain' });
  expect((await readBack(key)).equals(latest)).toBe(true);
  const blob = await store.read(key);
  // Its stream owns an open file: destroyed unread, it closes it (GC would, with a warning).
  blob?.stream.destroy();
  expect(blob?.contentType).toBe('text/plain');
  expect(readdirSync(path.join(dir, 'tmp'))).toEqual([]);
});

it('never serves the last bytes of an object altered on disk', async () => {
  const before = new Set(storedFiles());
  const bytes = randomBytes(2 * MiB + 100);
  await store.write('alice.pds.test/altered', chunked(bytes));
  const [file] = storedFiles().filter((f) => !before.has(f));
  const content = readFileSync(file as string);
  content[Math.floor(statSync(file as string).size / 2)]! ^= 1;
  writeFileSync(file as string, content);
  await expect(readBack('alice.pds.test/altered')).rejects.toThrow('integrity');
});

/**
 * Pieces of uneven sizes, some at once and some after a turn of the event loop, as from a socket: some
 * arrive while a disk write is in flight, some when the disk is idle.
 */
async function* trickled(bytes: Buffer): AsyncGenerator<Buffer> {
  for (let offset = 0, n = 0; offset < bytes.length; n++) {
    if (n % 3 === 0) await new Promise((resolve) => setImmediate(resolve));
    const size = 1 + ((n * 7919) % (200 * 1024));
    yield bytes.subarray(offset, offset + size);
    offset += size;
  }
}

it('keeps the order of bytes that arrive while earlier ones are being written', async () => {
  const bytes = randomBytes(3 * MiB + 12345);
  const key = 'alice.pds.test/trickled';
  expect(await store.write(key, trickled(bytes))).toBe(bytes.length);
  expect((await readBack(key)).equals(bytes)).toBe(true);
});

it('stores nothing, and leaves no temp file, when the bytes stop with an error midway', async () => {
  const key = 'alice.pds.test/cut-short';
  async function* failing(): AsyncGenerator<Buffer> {
    yield* trickled(randomBytes(2 * MiB));
    throw new Error('connection reset');
  }
  await expect(store.write(key, failing())).rejects.toThrow('connection reset');
  expect(await store.stat(key)).toBeNull();
  expect(readdirSync(path.join(dir, 'tmp'))).toEqual([]);
});
