// The S3 adapter (AWS S3 or any S3-compatible service): minio-js for bucket, stat, remove and streams;
// our own presigner for every address (sigv4.ts: a PUT's SSE header signed, one MAC per address).
// Path-style URLs.
import type { IncomingMessage } from 'node:http';
import { Client, CopyDestinationOptions, CopySourceOptions } from 'minio';
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
  trashKey,
} from './blob-store';
import type { AppendOptions, ResumableOptions, ResumableState, ResumableWrites } from './resumable';
import { S3Resumable } from './s3-resumable';
import { SigV4Presigner } from './sigv4';

const MiB = 1024 * 1024;
/** A part's presigned address is used at once; this only bounds a slow part's send. */
const PART_ADDRESS_SECONDS = 900;
/**
 * Part n of a multipart write holds PART_BYTES × (1 + ⌊(n − 1) / 1000⌋) bytes: a write holds two parts
 * in memory (one sending, one filling), 16 MiB for the first 8 GiB, and S3's 10,000 parts still reach
 * 430 GiB. minio's own putObject of a stream of unknown size would buffer parts of 550 MiB.
 */
const PART_BYTES = 8 * MiB;
const partBytes = (partNumber: number) => PART_BYTES * (1 + Math.floor((partNumber - 1) / 1000));
/** S3's most keys per DeleteObjects request. */
const DELETE_BATCH = 1000;
/** The largest object one CopyObject request copies (and the largest part of a copy in parts): 5 GiB. */
const COPY_MAX_BYTES = 5 * 1024 * MiB;

/** How upload addresses are signed: PUT, with the SSE header required. */
const UPLOAD = { method: 'PUT', headers: { [SSE_HEADER]: SSE_VALUE } };

export interface S3BlobStoreOptions {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  region: string;
  bucket: string;
  now?: () => Date;
  /** Larger objects are copied in parts of this size (tests make it small); COPY_MAX_BYTES when absent. */
  copyPartBytes?: number;
}

export class S3BlobStore implements BlobStore, ResumableWrites {
  private readonly client: Client;
  private readonly presigner: SigV4Presigner;
  private readonly now: () => Date;
  /** Whether the service copies objects itself; false once it said it does not (see move). */
  private serverCopies = true;
  private readonly resumable: S3Resumable;

  constructor(private readonly options: S3BlobStoreOptions) {
    const endpoint = new URL(options.endpoint);
    const useSSL = endpoint.protocol === 'https:';
    this.client = new Client({
      endPoint: endpoint.hostname,
      port: endpoint.port ? Number(endpoint.port) : useSSL ? 443 : 80,
      useSSL,
      accessKey: options.accessKey,
      secretKey: options.secretKey,
      // Known region: minio then never asks the service for it.
      region: options.region,
      pathStyle: true,
    });
    const { bucket, region, accessKey, secretKey } = options;
    this.presigner = new SigV4Presigner({ endpoint, bucket, region, accessKey, secretKey });
    this.now = options.now ?? (() => new Date());
    this.resumable = new S3Resumable(
      this.client,
      options.bucket,
      (prefix) => this.removePrefix(prefix),
      (key, uploadId, number) =>
        this.presigner.presign({
          method: 'PUT',
          // UploadPart carries no SSE header: the upload's encryption was set when it began.
          query: { partNumber: String(number), uploadId },
          key,
          expiresSeconds: PART_ADDRESS_SECONDS,
          now: this.now(),
        }),
    );
  }

  /** Creates the bucket when it does not exist yet. */
  async ensureBucket(): Promise<void> {
    if (!(await this.client.bucketExists(this.options.bucket))) await this.client.makeBucket(this.options.bucket, this.options.region);
  }

  async presignPut(key: string, options: PresignOptions): Promise<string> {
    return this.presigner.presign({ ...UPLOAD, key, expiresSeconds: options.ttlSeconds, now: this.now() });
  }

  uploadKey(address: string): string | null {
    return this.presigner.keyOf(address, UPLOAD, this.now());
  }

  beginResumable(key: string, ref: string, options: ResumableOptions): Promise<ResumableState> {
    return this.resumable.begin(key, ref, options);
  }

  appendResumable(key: string, ref: string, state: ResumableState, source: AsyncIterable<Buffer>, options?: AppendOptions) {
    return this.resumable.append(key, ref, state, source, options);
  }

  releaseResumable(_key: string, ref: string, drop: ResumableState, keep: ResumableState): Promise<void> {
    return this.resumable.release(ref, drop, keep);
  }

  finishResumable(key: string, ref: string, state: ResumableState): Promise<void> {
    return this.resumable.finish(key, ref, state);
  }

  abortResumable(key: string, ref: string, state: ResumableState): Promise<void> {
    return this.resumable.abort(key, ref, state);
  }

  async presignGet(key: string, options: PresignOptions): Promise<string> {
    const { response } = options;
    const query = response
      ? { 'response-content-type': response.contentType, 'response-content-disposition': response.disposition }
      : undefined;
    return this.presigner.presign({ method: 'GET', key, query, expiresSeconds: options.ttlSeconds, now: this.now() });
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

  async moveToTrash(key: string): Promise<void> {
    await this.move(key, trashKey(key));
  }

  async moveFromTrash(key: string): Promise<void> {
    await this.move(trashKey(key), key);
  }

  /**
   * S3 has no rename: a server-side copy (encrypted at rest as any write, type kept), then the source
   * removed. A crash between the two leaves both, which the repeat resolves by copying again.
   */
  private async move(from: string, to: string): Promise<void> {
    let source: { size: number; metaData: Record<string, string> };
    try {
      source = (await this.client.statObject(this.options.bucket, from)) as typeof source;
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    const headers = { [SSE_HEADER]: SSE_VALUE, 'Content-Type': storedContentType(source.metaData['content-type']) };
    try {
      if (this.serverCopies) await this.copyOnServer(from, to, source.size, headers);
    } catch (error) {
      // Ceph's RGW (before Squid) does not copy an encrypted object: NotImplemented.
      if ((error as { code?: string }).code !== 'NotImplemented') throw error;
      this.serverCopies = false;
    }
    if (!this.serverCopies) await this.copyThrough(from, to, headers['Content-Type']);
    await this.client.removeObject(this.options.bucket, from);
  }

  /** One CopyObject, or for an object larger than one takes, a multipart upload whose parts are ranges of the source. */
  private async copyOnServer(from: string, to: string, size: number, headers: Record<string, string>): Promise<void> {
    const { bucket } = this.options;
    const partBytes = this.options.copyPartBytes ?? COPY_MAX_BYTES;
    if (size <= partBytes) {
      await this.client.copyObject(
        new CopySourceOptions({ Bucket: bucket, Object: from }),
        new CopyDestinationOptions({ Bucket: bucket, Object: to, Headers: { [SSE_HEADER]: SSE_VALUE } }),
      );
      return;
    }
    const uploadId = await this.client.initiateNewMultipartUpload(bucket, to, headers);
    try {
      const etags: { part: number; etag: string }[] = [];
      for (let start = 0, part = 1; start < size; start += partBytes, part++) {
        const range = `bytes=${start}-${Math.min(start + partBytes, size) - 1}`;
        const copied = await this.client.uploadPart(
          {
            bucketName: bucket,
            objectName: to,
            uploadID: uploadId,
            partNumber: part,
            headers: { 'x-amz-copy-source': encodeURI(`${bucket}/${from}`), 'x-amz-copy-source-range': range },
          },
          Buffer.alloc(0),
        );
        etags.push({ part, etag: copied.etag });
      }
      await this.client.completeMultipartUpload(bucket, to, uploadId, etags);
    } catch (error) {
      await this.client.abortMultipartUpload(bucket, to, uploadId).catch(() => undefined);
      throw error;
    }
  }

  /** The bytes read and written again, through this process: for a service that copies nothing itself. */
  private async copyThrough(from: string, to: string, contentType: string): Promise<void> {
    const source = await this.read(from);
    if (!source) throw new Error(`the object ${from} went while it was being moved`);
    await this.write(to, source.stream as AsyncIterable<Buffer>, { contentType });
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
      // The source is let go (a stream is destroyed): its producer must not wait for a reader that left.
      await parts.return(undefined);
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
