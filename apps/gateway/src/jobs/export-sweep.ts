// export-sweep: removes export archives past EXPORT_TTL_HOURS, and the rows (and any uploaded archive) of
// imports and failed jobs older than that, so neither the store nor the table grows. Idempotent.
import type { PortabilityRepository } from '@pds/db';
import type { BlobStore } from '@pds/storage';
import { exportKey, importKey } from '../portability/keys';

export interface ExportSweepDeps {
  repository: PortabilityRepository;
  store: Pick<BlobStore, 'remove'>;
  clock: () => Date;
  ttlHours: number;
}

export function exportSweepProcessor(deps: ExportSweepDeps) {
  return async (): Promise<{ removed: number }> => {
    const now = deps.clock();
    const staleBefore = new Date(now.getTime() - deps.ttlHours * 3600 * 1000);
    let removed = 0;
    for (;;) {
      const batch = await deps.repository.expired(now, staleBefore, 200);
      for (const job of batch) {
        // Bytes first: a row without its archive is harmless, an archive without its row is never found again.
        await deps.store.remove(job.kind === 'export' ? exportKey(job.address, job.id) : importKey(job.address, job.id));
        await deps.repository.remove(job.instanceId, job.id);
        removed++;
      }
      if (batch.length < 200) return { removed };
    }
  };
}
