import path from 'node:path';
import type { Config } from '@pds/config';
import type { BlobStore } from './blob-store';
import { LocalBlobStore } from './local/store';
import { S3BlobStore } from './s3';

export * from './blob-store';
export * from './resumable';
export { BLOB_ROUTE, LocalBlobStore, type LocalWriteOptions } from './local/store';
export { S3BlobStore } from './s3';
export { SigV4Presigner, type S3Service } from './sigv4';
export { removeOrphans, type ListableStore, type LiveFiles } from './orphans';
export type { OpenedAddress } from './signed-address';

/**
 * The store the configuration names, ready to use: `STORAGE=s3` ensures the bucket exists;
 * `STORAGE=local` keeps encrypted files under `DATA_DIR/blobs` and needs the gateway's blob routes.
 */
export async function createBlobStore(config: Config & { MASTER_KEY: Buffer }): Promise<BlobStore> {
  if (config.STORAGE === 's3') {
    const store = new S3BlobStore({
      endpoint: config.S3_ENDPOINT,
      accessKey: config.S3_ACCESS_KEY,
      secretKey: config.S3_SECRET_KEY,
      region: config.S3_REGION,
      bucket: config.S3_BUCKET,
    });
    await store.ensureBucket();
    return store;
  }
  const store = new LocalBlobStore({
    dir: path.join(config.DATA_DIR, 'blobs'),
    masterKey: config.MASTER_KEY,
    maxBytes: config.MAX_UPLOAD_BYTES,
  });
  await store.init();
  return store;
}
