// The embedded default store: bytes on the local disk, encrypted at rest, reached through addresses that
// the gateway itself serves (`<baseUrl>/blobs/<token>`, see apps/gateway/src/blobs/routes.ts).
//
// File format: magic (4) | IV (12) | type length (1) | content type | AES-256-GCM ciphertext | tag (16).
// The content type is kept so GETs answer with it, as S3 does. The object key and the type are the GCM
// additional data, so a file copied under another key, or with another type, fails to decrypt. File names are the SHA-256 of
// the key: no key can name a path outside the store, whatever characters it holds.
import { createCipheriv, createDecipheriv, createHash, randomBytes, type DecipherGCM } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { BlobStore, PresignOptions } from './blob-store';
import { deriveKey } from './keys';
import { AddressSigner, type BlobMethod } from './signed-address';

const MAGIC = Buffer.from('PDB1');
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FIXED_HEADER_BYTES = MAGIC.length + IV_BYTES + 1;
const DEFAULT_TYPE = 'application/octet-stream';
/** A media type with optional parameters, printable ASCII only (it is sent back as a header). */
const CONTENT_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;[\x20-\x7e]*)?$/;
export const BLOB_ROUTE = '/blobs';
/** A temp file untouched this long belongs to no live upload. */
export const STALE_TEMP_MS = 15 * 60 * 1000;

export interface LocalBlobStoreOptions {
  /** Folder of the encrypted files; created when missing. */
  dir: string;
  masterKey: Buffer;
  /** Uploads larger than this are refused (BlobTooLargeError). */
  maxBytes: number;
  now?: () => number;
}

export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The upload is larger than the limit of ${maxBytes} bytes`);
  }
}

export interface StoredBlob {
  size: number;
  contentType: string;
  /** The decrypted bytes; errors if the file was altered on disk. */
  stream: Readable;
}

export class LocalBlobStore implements BlobStore {
  readonly maxBytes: number;
  private readonly dir: string;
  private readonly tmpDir: string;
  private readonly signer: AddressSigner;
  private readonly dataKey: Buffer;
  private readonly now: () => number;

  constructor(options: LocalBlobStoreOptions) {
    this.dir = path.resolve(options.dir);
    // Same file system as the objects, so the final rename is atomic.
    this.tmpDir = path.join(this.dir, 'tmp');
    this.maxBytes = options.maxBytes;
    this.signer = new AddressSigner(deriveKey(options.masterKey, 'local-blob-addresses'));
    this.dataKey = deriveKey(options.masterKey, 'local-blob-encryption');
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
      const { fileSize, header } = await readHeader(file, key);
      return fileSize - header.bytes - TAG_BYTES;
    } finally {
      await file.close();
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  /**
   * Encrypts `source` into the store under `key`, streaming, and returns the plaintext size. The object
   * appears whole or not at all: bytes go to a temp file that is renamed over the key's file at the end.
   */
  async write(key: string, source: AsyncIterable<Buffer>, contentType = DEFAULT_TYPE): Promise<number> {
    const target = this.pathOf(key);
    // The writer's pid first: a restart can tell which partial files belong to a process that died.
    const temp = path.join(this.tmpDir, `${process.pid}-${randomBytes(16).toString('hex')}`);
    const iv = randomBytes(IV_BYTES);
    const type = Buffer.from(contentType.length <= 255 && CONTENT_TYPE.test(contentType) ? contentType : DEFAULT_TYPE);
    const cipher = createCipheriv('aes-256-gcm', this.dataKey, iv).setAAD(additionalData(key, type));
    const file = await open(temp, 'wx', 0o600);
    const out = new BatchedWriter(file);
    let size = 0;
    try {
      try {
        await out.add(Buffer.concat([MAGIC, iv, Buffer.from([type.length]), type]));
        for await (const chunk of source) {
          size += chunk.length;
          if (size > this.maxBytes) throw new BlobTooLargeError(this.maxBytes);
          await out.add(cipher.update(chunk));
        }
        await out.add(cipher.final());
        await out.add(cipher.getAuthTag());
        await out.end();
        // One fsync for the whole object, before it gets its name.
        await file.sync();
      } finally {
        await out.settle();
        await file.close();
      }
      await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    return size;
  }

  /** The decrypted object, or null when there is none. */
  async read(key: string): Promise<StoredBlob | null> {
    const file = await this.open(key);
    if (!file) return null;
    try {
      const { fileSize, header } = await readHeader(file, key);
      const tag = Buffer.alloc(TAG_BYTES);
      await file.read(tag, 0, TAG_BYTES, fileSize - TAG_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', this.dataKey, header.iv)
        .setAAD(additionalData(key, Buffer.from(header.contentType)))
        .setAuthTag(tag);
      const size = fileSize - header.bytes - TAG_BYTES;
      const plaintext = Readable.from(decryptChunks(file, decipher, header.bytes, fileSize - TAG_BYTES), { objectMode: false });
      // The stream owns the handle from here: it closes when the stream ends, fails or is destroyed (even unread).
      plaintext.once('close', () => void file.close().catch(() => undefined));
      return { size, contentType: header.contentType, stream: plaintext };
    } catch (error) {
      await file.close().catch(() => undefined);
      throw error;
    }
  }

  private async open(key: string): Promise<FileHandle | null> {
    try {
      return await open(this.pathOf(key), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  private address(key: string, method: BlobMethod, options: PresignOptions): string {
    const token = this.signer.sign(key, method, this.now() + options.ttlSeconds * 1000);
    return `${options.baseUrl.replace(/\/+$/, '')}${BLOB_ROUTE}/${token}`;
  }

  private pathOf(key: string): string {
    const name = createHash('sha256').update(key).digest('hex');
    return path.join(this.dir, name.slice(0, 2), name);
  }
}

/**
 * Disk reads and writes move this many bytes at a time: far fewer system calls and stream hand-offs than
 * the 16/64 KiB stream defaults, while a transfer still holds only a few such buffers.
 */
const IO_CHUNK_BYTES = 1024 * 1024;

/**
 * Reads and decrypts `[start, end)` of the file, holding back the latest chunk until the next one (or the
 * tag check) arrives: the last bytes go out only once the tag has verified, so a reader of an altered
 * file never gets a complete body.
 */
async function* decryptChunks(file: FileHandle, decipher: DecipherGCM, start: number, end: number): AsyncGenerator<Buffer> {
  let held: Buffer | undefined;
  for (let position = start; position < end;) {
    const buffer = Buffer.allocUnsafe(Math.min(IO_CHUNK_BYTES, end - position));
    const { bytesRead } = await file.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) throw new Error('stored blob is shorter than its header says');
    position += bytesRead;
    if (held) yield held;
    held = decipher.update(buffer.subarray(0, bytesRead));
  }
  let last: Buffer;
  try {
    last = decipher.final();
  } catch {
    throw new Error('stored blob failed its integrity check');
  }
  yield held ? Buffer.concat([held, last]) : last;
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
    const bytes = this.batch.length === 1 ? (this.batch[0] as Buffer) : Buffer.concat(this.batch, this.batchBytes);
    this.batch = [];
    this.batchBytes = 0;
    await this.inFlight;
    const write = writeAll(this.file, bytes);
    // A failure surfaces at the next flush, end or settle; until then it must not count as unhandled.
    void write.catch(() => undefined);
    this.inFlight = write;
  }
}

/** A write can be partial; this one is not. */
async function writeAll(file: FileHandle, bytes: Buffer): Promise<void> {
  for (let offset = 0; offset < bytes.length;) {
    const { bytesWritten } = await file.write(bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}

function additionalData(key: string, contentType: Buffer): Buffer {
  return Buffer.concat([Buffer.from(key), Buffer.from([0]), contentType]);
}

interface Header {
  iv: Buffer;
  contentType: string;
  /** Bytes before the ciphertext. */
  bytes: number;
}

async function readHeader(file: FileHandle, key: string): Promise<{ fileSize: number; header: Header }> {
  const { size: fileSize } = await file.stat();
  const fixed = Buffer.alloc(FIXED_HEADER_BYTES);
  const { bytesRead } = await file.read(fixed, 0, FIXED_HEADER_BYTES, 0);
  if (bytesRead < FIXED_HEADER_BYTES || !fixed.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new Error(`stored blob of ${key} has an unknown format`);
  }
  const typeLength = fixed[FIXED_HEADER_BYTES - 1] as number;
  const bytes = FIXED_HEADER_BYTES + typeLength;
  if (fileSize < bytes + TAG_BYTES) throw new Error(`stored blob of ${key} is truncated`);
  const type = Buffer.alloc(typeLength);
  await file.read(type, 0, typeLength, FIXED_HEADER_BYTES);
  return { fileSize, header: { iv: fixed.subarray(MAGIC.length, MAGIC.length + IV_BYTES), contentType: type.toString('latin1'), bytes } };
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
