// trash-purge: finishes the moves into the trash and out of it that a crash cut short
// (files/trash-moves.ts), then purges files that have waited in the trash TRASH_DAYS (files/trash.ts),
// across instances, oldest first: rows and usage first, then bytes. Runs with each upload sweep (every
// few minutes); idempotent: a file restored or purged meanwhile is simply no longer found.
import { SYSTEM, type FileRepository } from '@pds/db';
import type { BlobStore } from '@pds/storage';
import { purgeFile } from '../files/trash';
import { settleUnfinished } from '../files/trash-moves';

export interface TrashPurgeDeps {
  files: FileRepository;
  store: Pick<BlobStore, 'remove' | 'moveToTrash' | 'moveFromTrash'>;
  clock: () => Date;
  /** Days a file stays in the trash (config TRASH_DAYS). */
  trashDays: number;
  batchSize?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export function trashPurgeProcessor(deps: TrashPurgeDeps) {
  const batchSize = deps.batchSize ?? 500;
  return async (): Promise<{ moved: number; purged: number }> => {
    const moved = await settleUnfinished(deps);
    const cutoff = new Date(deps.clock().getTime() - deps.trashDays * DAY_MS);
    let purged = 0;
    // Each batch holds only files still trashed before the cutoff, so the loop ends; a failing store
    // ends the run with an error (the job is retried).
    for (;;) {
      const batch = await deps.files.trashedBefore(cutoff, batchSize);
      for (const file of batch) {
        if (await purgeFile(deps, file.instanceId, file.address, file.fileId, SYSTEM)) purged++;
      }
      if (batch.length < batchSize) return { moved, purged };
    }
  };
}
