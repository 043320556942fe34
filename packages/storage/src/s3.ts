// The S3 adapter (AWS S3 or any S3-compatible service): minio-js for bucket, stat, remove, streams and
// presigned GETs; our own presigner for PUTs so the SSE header is signed (see sigv4.ts). Path-style URLs.
import type { IncomingMessage } from 'node:http';
import { Client } from 'minio';
import {
  BlobTooLargeError,
  SSE_HEADER,
  SSE_VALUE,
  storedContentType,
  type BlobStore,
  type PresignOptions,
  type StoredBlob,
  type StoredObject,
  type WriteOptions,
} from './blob-store';
import { presignV4 } from './sigv4';

const MiB = 1024 * 1024;
/**
 * Part n of a multipart write holds PART_BYTES × (1 + ⌊(n − 1) / 1000⌋) bytes: a write holds two parts
 * in memory (one sending, one filling), 16 MiB for the first 8 GiB, and S3's 10,000 parts still reach
 * 430 GiB. minio's own putObject of a stream of unknown size would buffer parts of 550 MiB.
 */
const PART_BYTES = 8 * MiB;
const partBytes = (partNumber: number) => PART_BYTES * (1 + Math.floor((partNumber - 1) / 1000));
/** S3's most keys per DeleteObjects request. */
const DELETE_BATCH = 1000;

export interface S3BlobStoreOptions {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  region: string;
  bucket: string;
  now?: () => Date;
}

export class S3BlobStore implements BlobStore {
  private readonly client: Client;
  private readonly endpoint: URL;
  private readonly now: () => Date;

  constructor(private readonly options: S3BlobStoreOptions) {
    this.endpoint = new URL(options.endpoint);
    const useSSL = this.endpoint.protocol === 'https:';
    this.client = new Client({
      endPoint: this.endpoint.hostname,
      port: this.endpoint.port ? Number(this.endpoint.port) : useSSL ? 443 : 80,
      useSSL,
      accessKey: options.accessKey,
      secretKey: options.secretKey,
      // Known region: minio then never asks the service for it before presigning.
      region: options.region,
      pathStyle: true,
    });
    this.now = options.now ?? (() => new Date());
  }

  /** Creates the bucket when it does not exist yet. */
  async ensureBucket(): Promise<void> {
    if (!(await this.client.bucketExists(this.options.bucket))) await this.client.makeBucket(this.options.bucket, this.options.region);
  }

  async presignPut(key: string, options: PresignOptions): Promise<string> {
    return presignV4({
      method: 'PUT',
      endpoint: this.endpoint,
      bucket: this.options.bucket,
      key,
      region: this.options.region,
      accessKey: this.options.accessKey,
      secretKey: this.options.secretKey,
      expiresSeconds: options.ttlSeconds,
      headers: { [SSE_HEADER]: SSE_VALUE },
      now: this.now(),
    });
  }

  async presignGet(key: string, options: PresignOptions): Promise<string> {
    return this.client.presignedGetObject(this.options.bucket, key, options.ttlSeconds, {}, this.now());
  }

  async stat(key: string): Promise<number | null> {
    try {
      return (await this.client.statObject(this.options.bucket, key)).size;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    const listing = this.client.listObjectsV2(this.options.bucket, prefix, true) as AsyncIterable<{
      name?: string;
      lastModified?: Date;
      size?: number;
    }>;
    for await (const item of listing) {
      if (item.name && item.lastModified) yield { key: item.name, lastModified: item.lastModified, size: item.size ?? 0 };
    }
  }

  async remove(key: string): Promise<void> {
    // S3 answers a delete of a missing key with success too.
    await this.client.removeObject(this.options.bucket, key);
  }

  async removePrefix(prefix: string): Promise<number> {
    if (prefix === '') throw new Error('removePrefix needs a prefix: it does not empty the whole bucket');
    await this.abortUploads(prefix);
    let removed = 0;
    let batch: string[] = [];
    const flush = async () => {
      // The answer lists only the keys that could not be removed (despite its declared type, each is the error itself).
      const failures = await this.client.removeObjects(this.options.bucket, batch);
      if (failures.length > 0) throw new Error(`removing objects under ${prefix} failed: ${JSON.stringify(failures[0])}`);
      removed += batch.length;
      batch = [];
    };
    for await (const object of this.list(prefix)) {
      batch.push(object.key);
      if (batch.length === DELETE_BATCH) await flush();
    }
    if (batch.length > 0) await flush();
    return removed;
  }

  /**
   * Aborts the multipart uploads under `prefix` that never completed (a process killed mid-write): their
   * parts are stored, and paid for, but no listing of objects shows them. Walks the key tree with a `/`
   * delimiter, as Swift's s3api answers an empty one with the prefix itself. Each page is asked for from
   * the start: aborted uploads leave the listing, so no marker is needed (minio drops the upload-id one).
   */
  private async abortUploads(prefix: string): Promise<void> {
    const { bucket } = this.options;
    for (;;) {
      const page = await this.client.listIncompleteUploadsQuery(bucket, prefix, '', '', '/');
      for (const upload of page.uploads) await this.client.abortMultipartUpload(bucket, upload.key, upload.uploadId);
      for (const { prefix: below } of page.prefixes) if (below !== prefix) await this.abortUploads(below);
      if (!page.isTruncated) return;
    }
  }

  async read(key: string): Promise<StoredBlob | null> {
    let response: IncomingMessage;
    try {
      // minio answers with the HTTP response itself: its headers describe the object.
      response = (await this.client.getObject(this.options.bucket, key)) as IncomingMessage;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    return {
      size: Number(response.headers['content-length']),
      contentType: storedContentType(response.headers['content-type']),
      stream: response,
    };
  }

  /**
   * One PUT when the bytes fit in a part; otherwise a multipart upload that sends each part while the
   * next fills, and is aborted (its parts dropped) when the source fails or is too long.
   */
  async write(key: string, source: AsyncIterable<Buffer>, options: WriteOptions = {}): Promise<number> {
    const { bucket } = this.options;
    const headers = { [SSE_HEADER]: SSE_VALUE, 'Content-Type': storedContentType(options.contentType) };
    const parts = partsOf(source, options.maxBytes ?? Infinity)[Symbol.asyncIterator]();
    const first = await parts.next();
    const second = first.done ? first : await parts.next();
    if (second.done) {
      const bytes = first.done ? Buffer.alloc(0) : first.value;
      await this.client.putObject(bucket, key, bytes, bytes.length, headers);
      return bytes.length;
    }
    const uploadId = await this.client.initiateNewMultipartUpload(bucket, key, headers);
    const etags: { part: number; etag: string }[] = [];
    let size = 0;
    let sending: Promise<void> = Promise.resolve();
    try {
      let partNumber = 0;
      for (let part = first; !part.done; part = partNumber === 1 ? second : await parts.next()) {
        const number = ++partNumber;
        const body = part.value;
        size += body.length;
        await sending;
        sending = this.client
          .uploadPart({ bucketName: bucket, objectName: key, uploadID: uploadId, partNumber: number, headers: {} }, body)
          .then(({ etag }) => void etags.push({ part: number, etag }));
        // Awaited before the next part is sent or at the end; until then a failure must not count as unhandled.
        sending.catch(() => undefined);
      }
      await sending;
      await this.client.completeMultipartUpload(bucket, key, uploadId, etags);
    } catch (error) {
      await sending.catch(() => undefined);
      await this.client.abortMultipartUpload(bucket, key, uploadId).catch(() => undefined);
      throw error;
    }
    return size;
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'NotFound' || code === 'NoSuchKey';
}

/** `source` in parts of partBytes(n) bytes, the last one shorter; refuses a source longer than `maxBytes`. */
async function* partsOf(source: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<Buffer> {
  let chunks: Buffer[] = [];
  let filled = 0;
  let total = 0;
  let partNumber = 1;
  for await (const chunk of source) {
    total += chunk.length;
    if (total > maxBytes) throw new BlobTooLargeError(maxBytes);
    chunks.push(chunk);
    filled += chunk.length;
    while (filled >= partBytes(partNumber)) {
      const whole = Buffer.concat(chunks, filled);
      const part = whole.subarray(0, partBytes(partNumber));
      chunks = [whole.subarray(part.length)];
      filled -= part.length;
      partNumber++;
      yield part;
    }
  }
  if (filled > 0) yield Buffer.concat(chunks, filled);
}
