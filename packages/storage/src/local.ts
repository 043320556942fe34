// The embedded default store: bytes on the local disk, encrypted at rest, reached through addresses that
// the gateway itself serves (`<baseUrl>/blobs/<token>`, see apps/gateway/src/blobs/routes.ts).
//
// File format: magic (4) | IV (12) | type length (1) | content type | AES-256-GCM ciphertext | tag (16).
// The content type is kept so GETs answer with it, as S3 does. The object key and the type are the GCM
// additional data, so a file copied under another key, or with another type, fails to decrypt. File names are the SHA-256 of
// the key: no key can name a path outside the store, whatever characters it holds.
import { createCipheriv, createDecipheriv, createHash, randomBytes, type DecipherGCM } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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
      const modified = await stat(file).then((st) => st.mtimeMs, () => null);
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
    const maxBytes = this.maxBytes;
    let size = 0;
    async function* encrypt(chunks: AsyncIterable<Buffer>) {
      yield Buffer.concat([MAGIC, iv, Buffer.from([type.length]), type]);
      for await (const chunk of chunks) {
        size += chunk.length;
        if (size > maxBytes) throw new BlobTooLargeError(maxBytes);
        yield cipher.update(chunk);
      }
      yield cipher.final();
      yield cipher.getAuthTag();
    }
    try {
      await pipeline(source, encrypt, createWriteStream(temp, { flags: 'wx', mode: 0o600, flush: true }));
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
      // The read stream takes the handle over and closes it; an empty object has no ciphertext to read.
      const ciphertext =
        size === 0 ? (await file.close(), Readable.from([])) : createReadStream('', { fd: file, start: header.bytes, end: fileSize - TAG_BYTES - 1 });
      const plaintext = verifiedDecryption(decipher);
      // Read errors fail the output; a reader that stops early (client gone) stops the file read.
      ciphertext.once('error', (error: Error) => plaintext.destroy(error));
      plaintext.once('close', () => ciphertext.destroy());
      return { size, contentType: header.contentType, stream: ciphertext.pipe(plaintext) };
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
 * Decrypts, holding back the latest chunk until the next one (or the tag check) arrives: the last bytes
 * go out only once the tag has verified, so a reader of an altered file never gets a complete body.
 */
function verifiedDecryption(decipher: DecipherGCM): Transform {
  let held: Buffer = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      const out = held;
      held = decipher.update(chunk);
      callback(null, out);
    },
    flush(callback) {
      try {
        callback(null, Buffer.concat([held, decipher.final()]));
      } catch {
        callback(new Error('stored blob failed its integrity check'));
      }
    },
  });
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
