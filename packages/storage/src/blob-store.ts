// The port every file feature uses for bytes. Two adapters honour it: S3 (any S3-compatible service)
// and the local disk (the embedded default, served by the gateway itself).
import type { Readable } from 'node:stream';

export const SSE_HEADER = 'x-amz-server-side-encryption';
export const SSE_VALUE = 'AES256';

export interface PresignOptions {
  ttlSeconds: number;
  /** Public base URL of the instance (`http://alice.pds.localhost:8080`); local addresses are served there. */
  baseUrl: string;
}

export interface WriteOptions {
  /** Served back with the object; `application/octet-stream` when absent or not a valid media type. */
  contentType?: string;
  /** A source longer than this is refused with BlobTooLargeError and nothing is stored; no limit when absent. */
  maxBytes?: number;
}

const DEFAULT_TYPE = 'application/octet-stream';
/** A media type with optional parameters, printable ASCII only (it is sent back as a header). */
const CONTENT_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;[\x20-\x7e]*)?$/;

/** The content type an object is stored with: the one given when it is a valid media type, else the default. */
export function storedContentType(contentType: string | undefined): string {
  return contentType !== undefined && CONTENT_TYPE.test(contentType) ? contentType : DEFAULT_TYPE;
}

export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The upload is larger than the limit of ${maxBytes} bytes`);
  }
}

export interface StoredBlob {
  size: number;
  contentType: string;
  /** The bytes; fails (never ends cleanly) when they could not all be read or were altered in the store. */
  stream: Readable;
}

export interface BlobStore {
  /** Signed address for one PUT of `key`; the PUT must carry `x-amz-server-side-encryption: AES256`. */
  presignPut(key: string, options: PresignOptions): Promise<string>;
  /** Signed address for GETs of `key`. */
  presignGet(key: string, options: PresignOptions): Promise<string>;
  /** Size in bytes of the stored object, or null when there is none. */
  stat(key: string): Promise<number | null>;
  /** Removes the object; removing a missing object is not an error. */
  remove(key: string): Promise<void>;
  /**
   * Stores the bytes of `source` under `key`, streaming, replacing any object there, and returns their
   * number. The object appears whole or not at all: when `source` fails or is too long, nothing is stored.
   */
  write(key: string, source: AsyncIterable<Buffer>, options?: WriteOptions): Promise<number>;
  /** The object, or null when there is none. */
  read(key: string): Promise<StoredBlob | null>;
  /** Every object whose key starts with `prefix` (each once, in no particular order). */
  list(prefix: string): AsyncIterable<StoredObject>;
  /** Removes every object whose key starts with `prefix` (and, on S3, unfinished uploads there); how many objects. */
  removePrefix(prefix: string): Promise<number>;
}

/** Object key of a file: `<instance address>/<fileId>`. */
export function objectKey(instanceAddress: string, fileId: string): string {
  return `${instanceAddress}/${fileId}`;
}

/** The folder of thumbnails within an instance's keys: a fileId never starts with a dot, so none is named so. */
const THUMBNAILS = '.thumbnails';

/**
 * Object key of a file's thumbnail: `<instance address>/.thumbnails/<fileId>`. Under the instance's
 * prefix, so whatever removes an instance's objects removes it too.
 */
export function thumbnailKey(instanceAddress: string, fileId: string): string {
  return `${instanceAddress}/${THUMBNAILS}/${fileId}`;
}

/**
 * The address and fileId of the file an object key belongs to (its bytes or its thumbnail), or null
 * for a key of another shape. A fileId never holds a `/`: other keys with more segments (an export
 * archive's) belong to no file.
 */
export function parseObjectKey(key: string): { address: string; fileId: string } | null {
  const [address, first, second, ...more] = key.split('/');
  const fileId = second === undefined ? first : first === THUMBNAILS && more.length === 0 ? second : undefined;
  return address && fileId ? { address, fileId } : null;
}

/** One object of a listable store. */
export interface StoredObject {
  key: string;
  lastModified: Date;
  size: number;
}
