// The port every file feature uses for bytes. Two adapters honour it: S3 (any S3-compatible service)
// and the local disk (the embedded default, served by the gateway itself).
import type { Readable } from 'node:stream';
import type { ResumableWrites } from './resumable';

export const SSE_HEADER = 'x-amz-server-side-encryption';
export const SSE_VALUE = 'AES256';

export interface PresignOptions {
  ttlSeconds: number;
  /** Public base URL of the instance (`http://alice.pds.localhost:8080`); local addresses are served there. */
  baseUrl: string;
  /** GET only: how the answer presents the bytes, whatever type they were stored with (S3's response-content-* parameters). */
  response?: ResponseOverrides;
}

/** The headers a signed GET answers with, fixed by whoever signs the address (a share link names its file so). */
export interface ResponseOverrides {
  /** A media type (`application/pdf`); only printable ASCII. */
  contentType: string;
  /** A Content-Disposition value (`attachment; filename="tax.pdf"`); only printable ASCII. */
  disposition: string;
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

export interface BlobStore extends ResumableWrites {
  /** Signed address for one PUT of `key`; the PUT must carry `x-amz-server-side-encryption: AES256`. */
  presignPut(key: string, options: PresignOptions): Promise<string>;
  /**
   * The object key a signed upload address (one of presignPut's) grants, while it is valid; null for
   * any other address (forged, altered, expired, for GETs, or not this store's).
   */
  uploadKey(address: string): string | null;
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
  /**
   * Moves the object of `key` to `trashKey(key)`: no address issued for `key` reaches it any more (a
   * presigned S3 address included), whatever its lifetime. Replaces an object at the target; does
   * nothing when `key` has none (moved already: a repeat after a crash is harmless). Two moves of one
   * key must not run at once (the caller holds the file's row).
   */
  moveToTrash(key: string): Promise<void>;
  /** Moves the object at `trashKey(key)` back to `key`, as moveToTrash does the other way. */
  moveFromTrash(key: string): Promise<void>;
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

/** The folder of trashed files' objects within an instance's keys: no fileId starts with a dot either. */
const TRASH = '.trash';

/**
 * Where a trashed file's object (its bytes or its thumbnail) waits: `<address>/.trash/<rest of the key>`.
 * Under the instance's prefix, so whatever removes an instance's objects removes it too.
 */
export function trashKey(key: string): string {
  const slash = key.indexOf('/');
  return `${key.slice(0, slash)}/${TRASH}${key.slice(slash)}`;
}

/** The key a trash key was made from (trashKey), or the key itself when it is no trash key. */
export function untrashedKey(key: string): string {
  const slash = key.indexOf('/');
  return slash > 0 && key.startsWith(`/${TRASH}/`, slash) ? key.slice(0, slash) + key.slice(slash + TRASH.length + 1) : key;
}

/**
 * The address and fileId of the file an object key belongs to (its bytes or its thumbnail, in the
 * trash or not), or null for a key of another shape. A fileId never holds a `/`: other keys with more
 * segments (an export archive's) belong to no file.
 */
export function parseObjectKey(key: string): { address: string; fileId: string } | null {
  const [address, first, second, ...more] = untrashedKey(key).split('/');
  const fileId = second === undefined ? first : first === THUMBNAILS && more.length === 0 ? second : undefined;
  return address && fileId ? { address, fileId } : null;
}

/** One object of a listable store. */
export interface StoredObject {
  key: string;
  lastModified: Date;
  size: number;
}
