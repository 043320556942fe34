// The S3 adapter (AWS S3 or any S3-compatible service): minio-js for bucket, stat, remove and presigned
// GETs; our own presigner for PUTs so the SSE header is signed (see sigv4.ts). Path-style URLs.
import { Client } from 'minio';
import { SSE_HEADER, SSE_VALUE, type BlobStore, type PresignOptions, type StoredObject } from './blob-store';
import { presignV4 } from './sigv4';

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
      const code = (error as { code?: string }).code;
      if (code === 'NotFound' || code === 'NoSuchKey') return null;
      throw error;
    }
  }

  /** Every object in the bucket with its last change, for the orphan sweep. */
  async *objects(): AsyncIterable<StoredObject> {
    const listing = this.client.listObjectsV2(this.options.bucket, '', true) as AsyncIterable<{ name?: string; lastModified?: Date }>;
    for await (const item of listing) {
      if (item.name && item.lastModified) yield { key: item.name, lastModified: item.lastModified };
    }
  }

  async remove(key: string): Promise<void> {
    // S3 answers a delete of a missing key with success too.
    await this.client.removeObject(this.options.bucket, key);
  }
}
