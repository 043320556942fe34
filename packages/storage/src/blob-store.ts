// The port every file feature uses for bytes. Two adapters honour it: S3 (any S3-compatible service)
// and the local disk (the embedded default, served by the gateway itself).

export const SSE_HEADER = 'x-amz-server-side-encryption';
export const SSE_VALUE = 'AES256';

export interface PresignOptions {
  ttlSeconds: number;
  /** Public base URL of the instance (`http://alice.pds.localhost:8080`); local addresses are served there. */
  baseUrl: string;
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
}

/** Object key of a file: `<instance address>/<fileId>`. */
export function objectKey(instanceAddress: string, fileId: string): string {
  return `${instanceAddress}/${fileId}`;
}

/** The address and fileId an object key names, or null for a key this product did not write. */
export function parseObjectKey(key: string): { address: string; fileId: string } | null {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1) return null;
  return { address: key.slice(0, slash), fileId: key.slice(slash + 1) };
}

/** One object of a listable store. */
export interface StoredObject {
  key: string;
  lastModified: Date;
}
