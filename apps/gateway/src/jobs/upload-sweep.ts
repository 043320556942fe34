// upload-sweep: removes uploads never completed within UPLOAD_DEADLINE (CONTRACT §2) — bytes, row and
// permissions. Idempotent: a file removed by an earlier run is simply no longer found.
import { SYSTEM, type FileRepository } from '@pds/db';

export interface UploadSweepDeps {
  files: FileRepository;
  /** The BlobStore (only `remove` is needed) and its key rule, `objectKey` of @pds/storage. */
  store: { remove(key: string): Promise<void> };
  objectKey: (instanceAddress: string, fileId: string) => string;
  clock: () => Date;
  /** Seconds an upload may stay New (config UPLOAD_DEADLINE). */
  uploadDeadline: number;
  batchSize?: number;
  /** Removes what crashes and late uploads left in the store (partial temp files, orphaned objects); how many. */
  leftovers?: () => Promise<number>;
}

export function uploadSweepProcessor(deps: UploadSweepDeps) {
  const batchSize = deps.batchSize ?? 500;
  return async (): Promise<{ removed: number; leftovers?: number }> => {
    const cutoff = new Date(deps.clock().getTime() - deps.uploadDeadline * 1000);
    let removed = 0;
    // Each batch holds only files still New and past the cutoff; removed or completed ones drop out,
    // and a failing store ends the run with an error (retried), so the loop always ends.
    for (;;) {
      const batch = await deps.files.abandonedUploads(cutoff, batchSize);
      for (const upload of batch) {
        const removeBytes = () => deps.store.remove(deps.objectKey(upload.address, upload.fileId));
        if (await deps.files.removeAbandoned(upload.instanceId, upload.fileId, cutoff, removeBytes, SYSTEM)) removed++;
      }
      if (batch.length < batchSize) return deps.leftovers ? { removed, leftovers: await deps.leftovers() } : { removed };
    }
  };
}
