// Bytes no file row points to: an upload to the signed address of a file deleted (or swept) while the
// address was still valid, or bytes PUT after a crash between removing the bytes and the row. On S3
// the client writes straight to the store, so only a sweep over the bucket can find them.
import { objectKey, parseObjectKey, type BlobStore } from './blob-store';

export type ListableStore = Pick<BlobStore, 'list' | 'remove'>;

/** Which of these files still exist and are not deleted (FileRepository.liveFiles). */
export type LiveFiles = (files: { address: string; fileId: string }[]) => Promise<{ address: string; fileId: string }[]>;

/**
 * Removes every object of this product's key shape (a file's bytes or its thumbnail), older than
 * `olderThan`, whose file is not live, a batch at a time. `olderThan` should be at least one
 * signed-address lifetime ago: a younger object may belong to an upload whose row is still being
 * written. How many were removed.
 */
export async function removeOrphans(store: ListableStore, liveFiles: LiveFiles, olderThan: Date, batchSize = 500): Promise<number> {
  let removed = 0;
  let batch: { key: string; file: { address: string; fileId: string } }[] = [];
  const flush = async () => {
    const live = new Set((await liveFiles(batch.map((object) => object.file))).map((f) => objectKey(f.address, f.fileId)));
    for (const { key, file } of batch) {
      if (live.has(objectKey(file.address, file.fileId))) continue;
      await store.remove(key);
      removed++;
    }
    batch = [];
  };
  for await (const object of store.list('')) {
    const file = parseObjectKey(object.key);
    // Keys of another shape were not written by this product: left alone.
    if (object.lastModified >= olderThan || !file) continue;
    batch.push({ key: object.key, file });
    if (batch.length >= batchSize) await flush();
  }
  if (batch.length > 0) await flush();
  return removed;
}
