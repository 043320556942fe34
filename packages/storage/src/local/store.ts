// The embedded default store: bytes on the local disk, encrypted at rest (format.ts), reached through
// addresses that the gateway itself serves (`<baseUrl>/blobs/<token>`, see apps/gateway/src/blobs/routes.ts).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdir, open, opendir, readdir, rm, type FileHandle } from 'node:fs/promises';
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
  trashKey,
  untrashedKey,
} from '../blob-store';
import { deriveKey } from '../keys';
import type { AppendOptions, ResumableOptions, ResumableState, ResumableWrites } from '../resumable';
import { AddressSigner, type BlobMethod, type OpenedAddress } from '../signed-address';
import { removeStaleTemp } from './cleanup';
import { moveDurably, renameDurably } from './durability';
import {
  additionalData,
  HASH_NAME,
  hashName,
  IV_BYTES,
  MAGIC,
  MAX_HEADER_BYTES,
  MAX_KEY_BYTES,
  parseHeader,
  sealKey,
  unsealKey,
} from './format';
import { openRecords } from './records';
import { LocalResumable } from './resumable';
import { BatchedWriter, chunkLength, decryptChunks, readAt } from './streaming';

export const BLOB_ROUTE = '/blobs';

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

export class LocalBlobStore implements BlobStore, ResumableWrites {
  readonly maxBytes: number;
  private readonly dir: string;
  private readonly tmpDir: string;
  private readonly signer: AddressSigner;
  private readonly dataKey: Buffer;
  private readonly nameKey: Buffer;
  private readonly now: () => number;
  private readonly resumable: LocalResumable;

  constructor(options: LocalBlobStoreOptions) {
    this.dir = path.resolve(options.dir);
    // Same file system as the objects, so the final rename is atomic.
    this.tmpDir = path.join(this.dir, 'tmp');
    this.maxBytes = options.maxBytes;
    this.signer = new AddressSigner(deriveKey(options.masterKey, 'local-blob-addresses'));
    this.dataKey = deriveKey(options.masterKey, 'local-blob-encryption');
    this.nameKey = deriveKey(options.masterKey, 'local-blob-names');
    this.now = options.now ?? Date.now;
    this.resumable = new LocalResumable({
      dir: this.dir,
      dataKey: this.dataKey,
      nameKey: this.nameKey,
      pathOf: (key) => this.pathOf(key),
    });
  }

  /** Creates the folders, and removes what uploads cut short by a crash left in the temp folder. */
  async init(): Promise<void> {
    await mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    await mkdir(this.resumable.folder, { recursive: true, mode: 0o700 });
    await this.removeStaleTemp();
  }

  /** Removes partial uploads nobody is writing any more (cleanup.ts); how many. */
  removeStaleTemp(): Promise<number> {
    return removeStaleTemp(this.tmpDir, this.now());
  }

  async presignPut(key: string, options: PresignOptions): Promise<string> {
    return this.address(key, 'PUT', options);
  }

  async presignGet(key: string, options: PresignOptions): Promise<string> {
    return this.address(key, 'GET', options);
  }

  uploadKey(address: string): string | null {
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      return null;
    }
    const prefix = `${BLOB_ROUTE}/`;
    if (!url.pathname.startsWith(prefix)) return null;
    return this.openAddress(url.pathname.slice(prefix.length), 'PUT')?.key ?? null;
  }

  /** What a token from one of this store's addresses grants for `method` (an object key, and how to answer), or null. */
  openAddress(token: string, method: BlobMethod): OpenedAddress | null {
    return this.signer.open(token, method, this.now());
  }

  async stat(key: string): Promise<number | null> {
    const file = await this.open(key);
    if (!file) return null;
    try {
      const { size: fileSize } = await file.stat();
      return parseHeader(await readAt(file, 0, Math.min(fileSize, MAX_HEADER_BYTES)), fileSize, key).size;
    } finally {
      await file.close();
    }
  }

  async remove(key: string): Promise<void> {
    await Promise.all([rm(this.pathOf(key), { force: true }), rm(this.legacyPathOf(key), { force: true })]);
  }

  /** A rename: the bytes stay encrypted as they are (their additional data names the key outside the trash). */
  async moveToTrash(key: string): Promise<void> {
    await this.move(key, trashKey(key));
  }

  async moveFromTrash(key: string): Promise<void> {
    await this.move(trashKey(key), key);
  }

  private async move(from: string, to: string): Promise<void> {
    if (await moveDurably(this.dir, this.pathOf(from), this.pathOf(to))) return;
    await moveDurably(this.dir, this.legacyPathOf(from), this.legacyPathOf(to));
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
    // Uploads under way there too, as S3's removePrefix aborts its multipart uploads (they are not objects).
    await this.resumable.removeUnder(prefix);
    return removed;
  }

  beginResumable(key: string, ref: string, options: ResumableOptions): Promise<ResumableState> {
    return this.resumable.begin(key, ref, options);
  }

  appendResumable(key: string, ref: string, state: ResumableState, source: AsyncIterable<Buffer>, options?: AppendOptions) {
    return this.resumable.append(key, ref, state, source, options);
  }

  /** Nothing to release: a file of records is cut back to the committed state by the next append. */
  async releaseResumable(): Promise<void> {}

  finishResumable(key: string, ref: string, state: ResumableState): Promise<void> {
    return this.resumable.finish(key, ref, state);
  }

  abortResumable(_key: string, ref: string): Promise<void> {
    return this.resumable.abort(ref);
  }

  /**
   * Removes the files of uploads untouched since `before` (ms since the epoch) whose ref `live` does not
   * keep: their row was removed by a crash between the two, or they were begun and never recorded. How many.
   */
  removeAbandonedResumables(live: (refs: string[]) => Promise<Set<string>>, before: number): Promise<number> {
    return this.resumable.removeAbandoned(live, before);
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
      const sealed = unsealKey(this.nameKey, header.sealedKey, file);
      // The sealed key is the one outside the trash; the file's name says whether it is in it.
      const key =
        path.basename(file) !== hashName(sealed) && path.basename(file) === hashName(trashKey(sealed)) ? trashKey(sealed) : sealed;
      return { key, lastModified: mtime, size: header.size };
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
    // A trashed object is sealed as its key outside the trash, so moves are renames (see move).
    const keyBytes = Buffer.from(untrashedKey(key));
    if (keyBytes.length > MAX_KEY_BYTES) throw new Error(`object keys are limited to ${MAX_KEY_BYTES} bytes`);
    const target = this.pathOf(key);
    // The writer's pid first: a restart can tell which partial files belong to a process that died.
    const temp = path.join(this.tmpDir, `${process.pid}-${randomBytes(16).toString('hex')}`);
    const iv = randomBytes(IV_BYTES);
    // ≤ 255 bytes: its length is one byte of the header.
    const contentType = storedContentType(options.contentType);
    const type = Buffer.from(contentType.length <= 255 ? contentType : storedContentType(undefined));
    const cipher = createCipheriv('aes-256-gcm', this.dataKey, iv).setAAD(additionalData(untrashedKey(key), type));
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
        await renameDurably(this.dir, temp, target, whenNamed);
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

  /** The decrypted object, or null when there is none. */
  async read(key: string): Promise<StoredBlob | null> {
    const file = await this.open(key);
    if (!file) return null;
    try {
      const { size: fileSize } = await file.stat();
      // One read brings the header and, for objects up to IO_CHUNK_BYTES, the whole file with its tag.
      const first = await readAt(file, 0, chunkLength(0, fileSize));
      const header = parseHeader(first, fileSize, key);
      const objectData = additionalData(untrashedKey(key), Buffer.from(header.contentType));
      const { size } = header;
      const bytes =
        header.format === 'records'
          ? openRecords(file, { dataKey: this.dataKey, objectData, size }, header.bytes, fileSize)
          : decryptChunks(file, createDecipheriv('aes-256-gcm', this.dataKey, header.iv).setAAD(objectData), {
              read: first.subarray(header.bytes),
              until: first.length,
              fileSize,
            });
      const plaintext = Readable.from(bytes, { objectMode: false });
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
    const response = method === 'GET' ? options.response : undefined;
    const token = this.signer.sign(key, method, this.now() + options.ttlSeconds * 1000, response);
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
