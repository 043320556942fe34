// upload-sweep: removes uploads never completed within UPLOAD_DEADLINE (CONTRACT §2) — bytes, row and
// permissions — and ends the resumable uploads that expired (UPLOAD_DEADLINE after their last request)
// or whose file was completed or deleted: their multipart upload is aborted (S3) or their file of records
// removed (local). Idempotent: what an earlier run removed is simply no longer found.
import { SYSTEM, type FileRepository, type FileUploadRepository } from '@pds/db';
import type { ResumableState } from '@pds/storage';

export interface UploadSweepDeps {
  files: FileRepository;
  uploads: FileUploadRepository;
  /** The BlobStore (`remove` and `abortResumable`) and its key rule, `objectKey` of @pds/storage. */
  store: {
    remove(key: string): Promise<void>;
    abortResumable(key: string, ref: string, state: ResumableState): Promise<void>;
  };
  objectKey: (instanceAddress: string, fileId: string) => string;
  clock: () => Date;
  /** Seconds an upload may stay New, and a resumable upload live after its last request (config UPLOAD_DEADLINE). */
  uploadDeadline: number;
  batchSize?: number;
  /**
   * Removes what crashes and late uploads left in the store (partial temp files, orphaned objects, files
   * of resumable uploads no row records) from before `cutoff`; how many.
   */
  leftovers?: (cutoff: Date) => Promise<number>;
}

export function uploadSweepProcessor(deps: UploadSweepDeps) {
  const batchSize = deps.batchSize ?? 500;
  return async (): Promise<{ removed: number; ended: number; leftovers?: number }> => {
    const now = deps.clock();
    const cutoff = new Date(now.getTime() - deps.uploadDeadline * 1000);
    const ended = await endUploads(deps, cutoff, now, batchSize);
    let removed = 0;
    // Each batch holds only files still New and past the cutoff; removed or completed ones drop out,
    // and a failing store ends the run with an error (retried), so the loop always ends.
    for (;;) {
      const batch = await deps.files.abandonedUploads(cutoff, batchSize);
      for (const upload of batch) {
        const removeBytes = () => deps.store.remove(deps.objectKey(upload.address, upload.fileId));
        if (await deps.files.removeAbandoned(upload.instanceId, upload.fileId, cutoff, removeBytes, SYSTEM)) removed++;
      }
      if (batch.length < batchSize) break;
    }
    return deps.leftovers ? { removed, ended, leftovers: await deps.leftovers(cutoff) } : { removed, ended };
  };
}

/**
 * The resumable uploads that ended, first: a file swept after them has none left whose store state its
 * row's removal would forget. Each is aborted in the store with its row locked, then its row deleted.
 */
async function endUploads(deps: UploadSweepDeps, cutoff: Date, now: Date, batchSize: number): Promise<number> {
  let ended = 0;
  for (;;) {
    const batch = await deps.uploads.ended(cutoff, now, batchSize);
    for (const upload of batch) {
      const abort = () =>
        deps.store.abortResumable(deps.objectKey(upload.address, upload.fileId), upload.id, upload.state as ResumableState);
      if (await deps.uploads.removeEnded(upload.instanceId, upload.id, cutoff, now, abort)) ended++;
    }
    if (batch.length < batchSize) return ended;
  }
}
