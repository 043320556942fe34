// The embedded default store: bytes on the local disk, encrypted at rest, reached through addresses that
// the gateway itself serves (`<baseUrl>/blobs/<token>`, see apps/gateway/src/blobs/routes.ts).
//
// File format: magic (4) | IV (12) | type length (1) | content type | sealed key | AES-256-GCM ciphertext | tag (16).
// The content type is kept so GETs answer with it, as S3 does. The object key and the type are the GCM
// additional data, so a file copied under another key, or with another type, fails to decrypt. The sealed
// key (IV (12) | length (2) | key encrypted under a key of its own | tag (16)) is what a listing reads: names
// on disk do not reveal keys. A file is `<SHA-256 of the key's first segment>/<SHA-256 of the key>`: no key
// can name a path outside the store, whatever characters it holds, and one instance's objects (keys
// `<address>/…`) share one folder, which a listing of that prefix reads alone.
// Files of the first format (magic PDB1, no sealed key, under `<first 2 hex of the name>/<SHA-256 of the
// key>`) are still read, stat-ed and removed by key, but not listed.
import { createCipheriv, createDecipheriv, createHash, randomBytes, type DecipherGCM } from 'node:crypto';
import { mkdir, open, opendir, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import {
  BlobTooLargeError,
  storedContentType,
  type BlobStore,
  type PresignOptions,
  type StoredBlob,
  type StoredObject,
  type WriteOptions,
} from './blob-store';
import { deriveKey } from './keys';
import { AddressSigner, type BlobMethod } from './signed-address';

const MAGIC = Buffer.from('PDB2');
const LEGACY_MAGIC = Buffer.from('PDB1');
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FIXED_HEADER_BYTES = MAGIC.length + IV_BYTES + 1;
/** Longer than any key this product forms (an address of ≤ 253 characters, a fileId of ≤ 1,290). */
const MAX_KEY_BYTES = 2048;
/** The longest header, which one read at the start of a file always brings whole. */
const MAX_HEADER_BYTES = FIXED_HEADER_BYTES + 255 + IV_BYTES + 2 + MAX_KEY_BYTES + TAG_BYTES;
/** Folder and file names of this format: a SHA-256 in hex. */
const HASH_NAME = /^[0-9a-f]{64}$/;
export const BLOB_ROUTE = '/blobs';
/** A temp file untouched this long belongs to no live upload. */
export const STALE_TEMP_MS = 15 * 60 * 1000;

export interface LocalBlobStoreOptions {
  /** Folder of the encrypted files; created when missing. */
  dir: string;
  masterKey: Buffer;
  /** The limit of uploads to signed addresses, which the blob routes pass to write as its `maxBytes`. */
  maxBytes: number;
  now?: () => number;
}

export interface LocalWriteOptions extends WriteOptions {
  /** Runs once the object has its name, alongside the last fsync; write waits for both. */
  whenNamed?: () => Promise<void>;
}

export class LocalBlobStore implements BlobStore {
  readonly maxBytes: number;
  private readonly dir: string;
  private readonly tmpDir: string;
  private readonly signer: AddressSigner;
  private readonly dataKey: Buffer;
  private readonly nameKey: Buffer;
  private readonly now: () => number;

  constructor(options: LocalBlobStoreOptions) {
    this.dir = path.resolve(options.dir);
    // Same file system as the objects, so the final rename is atomic.
    this.tmpDir = path.join(this.dir, 'tmp');
    this.maxBytes = options.maxBytes;
    this.signer = new AddressSigner(deriveKey(options.masterKey, 'local-blob-addresses'));
    this.dataKey = deriveKey(options.masterKey, 'local-blob-encryption');
    this.nameKey = deriveKey(options.masterKey, 'local-blob-names');
    this.now = options.now ?? Date.now;
  }

  /** Creates the folders, and removes what uploads cut short by a crash left in the temp folder. */
  async init(): Promise<void> {
    await mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    await this.removeStaleTemp();
  }

  /**
   * Removes partial uploads nobody is writing any more: those of a process that no longer runs (the
   * writer's pid is in the name), and any untouched for STALE_TEMP_MS (a writer on another host, whose
   * pid means nothing here). A live upload writes continuously, so it never looks idle. How many.
   */
  async removeStaleTemp(): Promise<number> {
    const idleBefore = this.now() - STALE_TEMP_MS;
    let removed = 0;
    for (const name of await readdir(this.tmpDir).catch(() => [] as string[])) {
      const file = path.join(this.tmpDir, name);
      const pid = Number(name.split('-')[0]);
      const modified = await stat(file).then(
        (st) => st.mtimeMs,
        () => null,
      );
      if (modified === null) continue;
      if ((pid !== process.pid && !processRuns(pid)) || modified < idleBefore) {
        await rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }

  async presignPut(key: string, options: PresignOptions): Promise<string> {
    return this.address(key, 'PUT', options);
  }

  async presignGet(key: string, options: PresignOptions): Promise<string> {
    return this.address(key, 'GET', options);
  }

  /** The object key a token from one of this store's addresses grants `method` on, or null. */
  openAddress(token: string, method: BlobMethod): string | null {
    return this.signer.verify(token, method, this.now());
  }

  async stat(key: string): Promise<number | null> {
    const file = await this.open(key);
    if (!file) return null;
    try {
      const { size: fileSize } = await file.stat();
      const header = parseHeader(await readAt(file, 0, Math.min(fileSize, MAX_HEADER_BYTES)), fileSize, key);
      return fileSize - header.bytes - TAG_BYTES;
    } finally {
      await file.close();
    }
  }

  async remove(key: string): Promise<void> {
    await Promise.all([rm(this.pathOf(key), { force: true }), rm(this.legacyPathOf(key), { force: true })]);
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    const slash = prefix.indexOf('/');
    const folders = slash >= 0 ? [hashName(prefix.slice(0, slash))] : (await readdir(this.dir)).filter((name) => HASH_NAME.test(name));
    for (const folder of folders) {
      const entries = await opendir(path.join(this.dir, folder)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw error;
      });
      if (!entries) continue;
      // Streamed: a folder holds one instance's objects, however many.
      for await (const entry of entries) {
        if (!entry.isFile() || !HASH_NAME.test(entry.name)) continue;
        const object = await this.describe(path.join(this.dir, folder, entry.name));
        if (object?.key.startsWith(prefix)) yield object;
      }
    }
  }

  async removePrefix(prefix: string): Promise<number> {
    if (prefix === '') throw new Error('removePrefix needs a prefix: it does not empty the whole store');
    let removed = 0;
    for await (const object of this.list(prefix)) {
      await this.remove(object.key);
      removed++;
    }
    return removed;
  }

  /** The key, size and last change of an object file, or null when it went meanwhile. */
  private async describe(file: string): Promise<StoredObject | null> {
    const handle = await open(file, 'r').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (!handle) return null;
    try {
      const { size: fileSize, mtime } = await handle.stat();
      const header = parseHeader(await readAt(handle, 0, Math.min(fileSize, MAX_HEADER_BYTES)), fileSize, file);
      if (!header.sealedKey) throw new Error(`stored blob ${file} has no sealed key`);
      return { key: unsealKey(this.nameKey, header.sealedKey, file), lastModified: mtime, size: fileSize - header.bytes - TAG_BYTES };
    } finally {
      await handle.close();
    }
  }

  /**
   * Encrypts `source` into the store under `key`, streaming, and returns the plaintext size. The object
   * appears whole or not at all: bytes go to a temp file that is renamed over the key's file at the end.
   * On return the object is durable: the file is synced before the rename, its folder after it.
   */
  async write(key: string, source: AsyncIterable<Buffer>, options: LocalWriteOptions = {}): Promise<number> {
    const { maxBytes = Infinity, whenNamed } = options;
    const keyBytes = Buffer.from(key);
    if (keyBytes.length > MAX_KEY_BYTES) throw new Error(`object keys are limited to ${MAX_KEY_BYTES} bytes`);
    const target = this.pathOf(key);
    // The writer's pid first: a restart can tell which partial files belong to a process that died.
    const temp = path.join(this.tmpDir, `${process.pid}-${randomBytes(16).toString('hex')}`);
    const iv = randomBytes(IV_BYTES);
    // ≤ 255 bytes: its length is one byte of the header.
    const contentType = storedContentType(options.contentType);
    const type = Buffer.from(contentType.length <= 255 ? contentType : storedContentType(undefined));
    const cipher = createCipheriv('aes-256-gcm', this.dataKey, iv).setAAD(additionalData(key, type));
    const file = await open(temp, 'wx', 0o600);
    const out = new BatchedWriter(file);
    let size = 0;
    let closed: Promise<void> | undefined;
    try {
      try {
        await out.add(Buffer.concat([MAGIC, iv, Buffer.from([type.length]), type, sealKey(this.nameKey, keyBytes)]));
        for await (const chunk of source) {
          size += chunk.length;
          if (size > maxBytes) throw new BlobTooLargeError(maxBytes);
          await out.add(cipher.update(chunk));
        }
        await out.add(cipher.final());
        await out.add(cipher.getAuthTag());
        await out.end();
        // One fsync for the whole object, before it gets its name.
        await file.sync();
      } finally {
        await out.settle();
        // Each file operation waits for a worker thread: the closing runs beside the rename.
        closed = file.close();
      }
      try {
        await this.rename(temp, target, whenNamed);
      } finally {
        await closed;
      }
    } catch (error) {
      await closed?.catch(() => undefined);
      await rm(temp, { force: true });
      throw error;
    }
    return size;
  }

  /**
   * Moves the temp file to its name and makes the name durable: an fsync of the folder (a rename is
   * not durable until the file system commits on its own), whose opening runs beside the rename. A
   * key's folder (one of 256) is created by the first object that lands in it, and is then made
   * durable in the store's folder.
   */
  private async rename(temp: string, target: string, whenNamed: (() => Promise<void>) | undefined): Promise<void> {
    const folder = path.dirname(target);
    const opening = open(folder, 'r');
    // Until awaited below: a missing folder is created, then opened again.
    opening.catch(() => undefined);
    try {
      await rename(temp, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        void opening.then((handle) => handle.close()).catch(() => undefined);
        throw error;
      }
      await mkdir(folder, { recursive: true, mode: 0o700 });
      await syncFolder(this.dir);
      await rename(temp, target);
    }
    const handle = await opening.catch(() => open(folder, 'r'));
    try {
      await Promise.all([handle.sync(), whenNamed?.()]);
    } finally {
      // Synced: nothing waits for the closing.
      void handle.close().catch(() => undefined);
    }
  }

  /** The decrypted object, or null when there is none. */
  async read(key: string): Promise<StoredBlob | null> {
    const file = await this.open(key);
    if (!file) return null;
    try {
      const { size: fileSize } = await file.stat();
      // One read brings the header and, for objects up to IO_CHUNK_BYTES, the whole file with its tag.
      const first = await readAt(file, 0, chunkLength(0, fileSize));
      const header = parseHeader(first, fileSize, key);
      const decipher = createDecipheriv('aes-256-gcm', this.dataKey, header.iv).setAAD(
        additionalData(key, Buffer.from(header.contentType)),
      );
      const size = fileSize - header.bytes - TAG_BYTES;
      const ciphertext = decryptChunks(file, decipher, { read: first.subarray(header.bytes), until: first.length, fileSize });
      const plaintext = Readable.from(ciphertext, { objectMode: false });
      // The stream owns the handle from here: it closes when the stream ends, fails or is destroyed (even unread).
      plaintext.once('close', () => void file.close().catch(() => undefined));
      return { size, contentType: header.contentType, stream: plaintext };
    } catch (error) {
      await file.close().catch(() => undefined);
      throw error;
    }
  }

  private async open(key: string): Promise<FileHandle | null> {
    for (const file of [this.pathOf(key), this.legacyPathOf(key)]) {
      try {
        return await open(file, 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    return null;
  }

  private address(key: string, method: BlobMethod, options: PresignOptions): string {
    const token = this.signer.sign(key, method, this.now() + options.ttlSeconds * 1000);
    return `${options.baseUrl.replace(/\/+$/, '')}${BLOB_ROUTE}/${token}`;
  }

  private pathOf(key: string): string {
    const slash = key.indexOf('/');
    return path.join(this.dir, hashName(slash >= 0 ? key.slice(0, slash) : key), hashName(key));
  }

  /** Where the first format kept the object. */
  private legacyPathOf(key: string): string {
    const name = hashName(key);
    return path.join(this.dir, name.slice(0, 2), name);
  }
}

function hashName(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** IV | key length (2) | encrypted key | tag, under the names key. */
function sealKey(nameKey: Buffer, key: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', nameKey, iv);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(key.length);
  return Buffer.concat([iv, length, cipher.update(key), cipher.final(), cipher.getAuthTag()]);
}

function unsealKey(nameKey: Buffer, sealed: Buffer, file: string): string {
  const length = sealed.readUInt16BE(IV_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', nameKey, sealed.subarray(0, IV_BYTES));
  decipher.setAuthTag(sealed.subarray(IV_BYTES + 2 + length));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + 2, IV_BYTES + 2 + length)), decipher.final()]).toString();
  } catch {
    throw new Error(`stored blob ${file} has a key that does not open (altered, or another master key)`);
  }
}

/**
 * Disk reads and writes move up to this many bytes at a time: far fewer system calls and stream
 * hand-offs than the 16/64 KiB stream defaults, while a transfer still holds only a few such buffers.
 */
const IO_CHUNK_BYTES = 1024 * 1024;
/**
 * Decrypted bytes go out in pieces of this size, the latest held back until the tag has verified: the
 * rest of a chunk travels to the client while the next piece is decrypted, and an altered file still
 * never reaches a reader complete.
 */
const SEND_PIECE_BYTES = 256 * 1024;

/** How many bytes to read at `position`: a chunk, stretched so that the tag is never split between two reads. */
function chunkLength(position: number, fileSize: number): number {
  const left = fileSize - position;
  return left - IO_CHUNK_BYTES < TAG_BYTES ? left : IO_CHUNK_BYTES;
}

/** `length` bytes at `position`, read into `into` when given (it must be long enough), else a new buffer. */
async function readAt(file: FileHandle, position: number, length: number, into?: Buffer): Promise<Buffer> {
  const buffer = into ? into.subarray(0, length) : Buffer.allocUnsafe(length);
  for (let filled = 0; filled < length;) {
    const { bytesRead } = await file.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) throw new Error('stored blob is shorter than its header says');
    filled += bytesRead;
  }
  return buffer;
}

/**
 * Decrypts the file from its first bytes past the header, `start.read`, which end at offset `start.until`
 * (read already with the header). The last read of the file ends with the tag, checked before the final
 * piece goes out. Later reads all go into one buffer: decryption copies out of it, and a download
 * allocating a new MiB per MiB read made a large gateway heap collect often (GC was ≈ 45 % of the
 * product's busy time in the streams part of a full bench run).
 */
async function* decryptChunks(
  file: FileHandle,
  decipher: DecipherGCM,
  start: { read: Buffer; until: number; fileSize: number },
): AsyncGenerator<Buffer> {
  const { fileSize } = start;
  let held: Buffer | undefined;
  let chunk = start.read;
  let readBuffer: Buffer | undefined;
  for (let position = start.until; ;) {
    const last = position === fileSize;
    const ciphertext = last ? chunk.subarray(0, chunk.length - TAG_BYTES) : chunk;
    if (last) decipher.setAuthTag(chunk.subarray(chunk.length - TAG_BYTES));
    for (let offset = 0; offset < ciphertext.length; offset += SEND_PIECE_BYTES) {
      if (held) yield held;
      held = decipher.update(ciphertext.subarray(offset, offset + SEND_PIECE_BYTES));
    }
    if (last) break;
    // The largest read: a chunk stretched by less than a tag.
    readBuffer ??= Buffer.allocUnsafe(IO_CHUNK_BYTES + TAG_BYTES);
    chunk = await readAt(file, position, chunkLength(position, fileSize), readBuffer);
    position += chunk.length;
  }
  let final: Buffer;
  try {
    final = decipher.final();
  } catch {
    throw new Error('stored blob failed its integrity check');
  }
  yield held ? Buffer.concat([held, final]) : final;
}

/**
 * Collects small buffers into IO_CHUNK_BYTES writes and keeps one write in flight while the next batch
 * fills, so the source is read while the disk writes (and waits when the disk is slower: backpressure).
 */
class BatchedWriter {
  private batch: Buffer[] = [];
  private batchBytes = 0;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(private readonly file: FileHandle) {}

  async add(buffer: Buffer): Promise<void> {
    this.batch.push(buffer);
    this.batchBytes += buffer.length;
    if (this.batchBytes >= IO_CHUNK_BYTES) await this.flush();
  }

  /** Writes what is left and waits for every write. */
  async end(): Promise<void> {
    await this.flush();
    await this.inFlight;
  }

  /** Waits for the write in flight, ignoring its outcome (for clean-up after a failure). */
  async settle(): Promise<void> {
    await this.inFlight.catch(() => undefined);
  }

  private async flush(): Promise<void> {
    if (this.batchBytes === 0) return;
    const buffers = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    await this.inFlight;
    const write = writeAll(this.file, buffers);
    // A failure surfaces at the next flush, end or settle; until then it must not count as unhandled.
    void write.catch(() => undefined);
    this.inFlight = write;
  }
}

/** One system call for the whole batch, no copy into one buffer first; a write can be partial, this one is not. */
async function writeAll(file: FileHandle, buffers: Buffer[]): Promise<void> {
  let { bytesWritten } = await file.writev(buffers);
  for (const buffer of buffers) {
    // Rare on a regular file: what a short write left goes out as plain writes.
    for (let offset = bytesWritten; offset < buffer.length;)
      offset += (await file.write(buffer, offset, buffer.length - offset)).bytesWritten;
    bytesWritten = Math.max(0, bytesWritten - buffer.length);
  }
}

function additionalData(key: string, contentType: Buffer): Buffer {
  return Buffer.concat([Buffer.from(key), Buffer.from([0]), contentType]);
}

interface Header {
  iv: Buffer;
  contentType: string;
  /** Absent in the first format. */
  sealedKey?: Buffer;
  /** Bytes before the ciphertext. */
  bytes: number;
}

/** The header at the start of `bytes` (the first read of a file of `fileSize` bytes); `label` names the object in errors. */
function parseHeader(bytes: Buffer, fileSize: number, label: string): Header {
  const magic = bytes.subarray(0, MAGIC.length);
  const legacy = magic.equals(LEGACY_MAGIC);
  if (bytes.length < FIXED_HEADER_BYTES || !(legacy || magic.equals(MAGIC))) {
    throw new Error(`stored blob of ${label} has an unknown format`);
  }
  const typeEnd = FIXED_HEADER_BYTES + (bytes[FIXED_HEADER_BYTES - 1] as number);
  const keyLength = legacy || bytes.length < typeEnd + IV_BYTES + 2 ? 0 : bytes.readUInt16BE(typeEnd + IV_BYTES);
  const headerBytes = legacy ? typeEnd : typeEnd + IV_BYTES + 2 + keyLength + TAG_BYTES;
  if (fileSize < headerBytes + TAG_BYTES || bytes.length < headerBytes) throw new Error(`stored blob of ${label} is truncated`);
  return {
    iv: bytes.subarray(MAGIC.length, MAGIC.length + IV_BYTES),
    contentType: bytes.subarray(FIXED_HEADER_BYTES, typeEnd).toString('latin1'),
    ...(legacy ? {} : { sealedKey: bytes.subarray(typeEnd, headerBytes) }),
    bytes: headerBytes,
  };
}

/** An fsync of a folder: what makes a rename or a new entry in it durable. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Whether a process with this pid runs on this host (signal 0 checks without signalling). */
function processRuns(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
