// The trash (issue 22): DELETE /files/file/:fileId moves a completed file here. It is Deleted to every
// reader (content 404, shares suspended, a search for status Deleted finds it as before), and its bytes
// move to trash keys, where no address issued before reaches them (trash-moves.ts); but they and the
// permissions stay, and the bytes still count in the instance's usage, until the owner restores it
// or purges it, or the worker purges it TRASH_DAYS after the delete (jobs/trash-purge.ts).
import type { Actor, FileListing, FileRepository, Page } from '@pds/db';
import { ApiError } from '@pds/http';
import { objectKey, thumbnailKey, trashKey, type BlobStore } from '@pds/storage';
import type { Clock } from '@pds/tokens';
import type { ResolvedInstance } from '../instances/registry';
import { settleFile } from './trash-moves';
import { fileView, type FileJson } from './view';

export interface TrashDeps {
  files: FileRepository;
  store: Pick<BlobStore, 'remove' | 'moveToTrash' | 'moveFromTrash'>;
  clock: Clock;
}

export type TrashedJson = FileJson & { trashedAt: string; size: number };

/** How many trashed files emptying the trash reads at once. */
const EMPTY_BATCH = 100;

const notInTrash = (fileId: string) => ApiError.notFound(`File ${fileId} is not in the trash`);

/**
 * Takes one file out of the trash for good: the row first (with the usage, in one transaction), then
 * its bytes. Bytes left by a failure here are no live file's, so the orphan sweep removes them later.
 * Null when the file is not in the trash.
 */
export async function purgeFile(
  deps: Pick<TrashDeps, 'files' | 'store'>,
  instanceId: string,
  address: string,
  fileId: string,
  actor: Actor,
) {
  const purged = await deps.files.purge(instanceId, fileId, actor);
  if (!purged) return null;
  // Under the trash keys, or (a move cut short) still under the file's own. The row no longer says
  // whether a thumbnail was stored; removing a missing object is no error.
  for (const key of [objectKey(address, fileId), thumbnailKey(address, fileId)]) {
    await deps.store.remove(trashKey(key));
    await deps.store.remove(key);
  }
  return purged;
}

/** The owner's calls on the trash (the routes are owner-only). */
export class TrashService {
  constructor(private readonly deps: TrashDeps) {}

  async list(tenant: ResolvedInstance, page: Page): Promise<TrashedJson[]> {
    const files = await this.deps.files.trashed(tenant.instance.id, page);
    return files.map((file: FileListing & { trashedAt: string }) => ({
      ...fileView(file, { permissions: true }),
      trashedAt: file.trashedAt,
      size: Number(file.size ?? 0),
    }));
  }

  /** Back as it was: Completed, with its permissions (they never left) and the same bytes, back under their keys. */
  async restore(tenant: ResolvedInstance, fileId: string, actor: Actor): Promise<FileJson> {
    const restored = await this.deps.files.restore(tenant.instance.id, fileId, this.deps.clock(), actor);
    if (!restored) throw notInTrash(fileId);
    await settleFile(this.deps, tenant.instance.id, tenant.instance.address, fileId);
    return fileView(restored, { permissions: true });
  }

  async purge(tenant: ResolvedInstance, fileId: string, actor: Actor): Promise<FileJson> {
    const purged = await purgeFile(this.deps, tenant.instance.id, tenant.instance.address, fileId, actor);
    if (!purged) throw notInTrash(fileId);
    return fileView(purged, { permissions: true });
  }

  /** Purges every trashed file; how many. */
  async empty(tenant: ResolvedInstance, actor: Actor): Promise<{ purged: number }> {
    let purged = 0;
    for (;;) {
      // Purged files leave the trash, so the first page is always the next batch.
      const batch = await this.deps.files.trashed(tenant.instance.id, { take: EMPTY_BATCH, skip: 0 });
      for (const file of batch) {
        if (await purgeFile(this.deps, tenant.instance.id, tenant.instance.address, file.fileId, actor)) purged++;
      }
      if (batch.length < EMPTY_BATCH) return { purged };
    }
  }
}
