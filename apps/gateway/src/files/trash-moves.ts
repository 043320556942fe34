// Where a file's objects (bytes and thumbnail) are: under their keys while it is live, under their trash
// keys (trashKey of @pds/storage) while it waits in the trash, so no address issued before a delete —
// a presigned S3 one included — reaches them. The change of state comes first and flags the move
// (FileRepository: bytesMoving); the move runs holding the row, then clears the flag. A crash in
// between leaves the flag set: the next delete or restore call of the file, or the worker
// (jobs/trash-purge.ts, and at its start), moves them again, which is harmless: a move whose source is
// gone does nothing.
import type { FileRepository } from '@pds/db';
import { objectKey, thumbnailKey, type BlobStore } from '@pds/storage';

export interface TrashMoveDeps {
  files: Pick<FileRepository, 'settle' | 'unsettled'>;
  store: Pick<BlobStore, 'moveToTrash' | 'moveFromTrash'>;
}

/** Moves the file's objects where its row says they belong, when a move is due; whether one was. */
export function settleFile(deps: TrashMoveDeps, instanceId: string, address: string, fileId: string): Promise<boolean> {
  return deps.files.settle(instanceId, fileId, async (trashed) => {
    // The thumbnail whatever the row says of it: a thumbnail job may have stored one meanwhile.
    for (const key of [objectKey(address, fileId), thumbnailKey(address, fileId)]) {
      await (trashed ? deps.store.moveToTrash(key) : deps.store.moveFromTrash(key));
    }
  });
}

/** Finishes the moves that crashes cut short, across instances, a batch at a time; how many. */
export async function settleUnfinished(deps: TrashMoveDeps, batchSize = 100): Promise<number> {
  let settled = 0;
  for (;;) {
    const batch = await deps.files.unsettled(batchSize);
    for (const file of batch) if (await settleFile(deps, file.instanceId, file.address, file.fileId)) settled++;
    if (batch.length < batchSize) return settled;
  }
}
