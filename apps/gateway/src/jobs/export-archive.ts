// export-archive: streams the archive of a whole instance into the store (writer.ts), then marks its row
// ready. The store writes an object whole or not at all, and the row says ready only after that, so a
// half archive is never offered. A worker killed mid-way loses its lock; BullMQ runs the job again and
// it starts over, replacing whatever the dead attempt may have stored.
import type { Job } from 'bullmq';
import type { PortabilityRepository } from '@pds/db';
import { errorMessage, isLastAttempt, type JobPayloads, type QUEUE_NAMES } from '@pds/queue';
import type { BlobStore } from '@pds/storage';
import { exportKey } from '../portability/keys';
import { instanceSource } from '../portability/source';
import { storeArchive } from '../portability/writer';

export interface ExportArchiveDeps {
  repository: PortabilityRepository;
  store: BlobStore;
  clock: () => Date;
  /** Hours a ready archive is kept (EXPORT_TTL_HOURS). */
  ttlHours: number;
  /** gzip level (tests and the bench may trade size for speed). */
  level?: number;
}

/** Progress is written at most this often: a row update per file would slow a big export. */
const PROGRESS_EVERY_MS = 500;

type ExportJob = Pick<Job<JobPayloads[typeof QUEUE_NAMES.exportArchive]>, 'data' | 'attemptsMade' | 'opts'>;

export function exportArchiveProcessor(deps: ExportArchiveDeps) {
  return async (job: ExportJob): Promise<{ exported: boolean; bytes?: number }> => {
    const { instanceId, address, id } = job.data;
    const row = await deps.repository.find(instanceId, id, 'export');
    if (row?.status !== 'running') return { exported: false };
    const key = exportKey(address, id);
    try {
      const totals = await deps.repository.counts(instanceId);
      const total = Math.max(1, totals.files + totals.records);
      let last = 0;
      const source = await instanceSource(deps.repository, deps.store, { id: instanceId, address }, deps.clock());
      const { manifest, bytes } = await storeArchive(deps.store, key, source, {
        level: deps.level,
        onProgress: (written) => {
          const now = Date.now();
          if (now - last < PROGRESS_EVERY_MS) return;
          last = now;
          const progress = Math.min(0.99, (written.files + written.records) / total);
          void deps.repository
            .progress(instanceId, id, { files: written.files, records: written.records, progress })
            .catch(() => undefined);
        },
      });
      const at = deps.clock();
      const finished = await deps.repository.finish(instanceId, id, {
        status: 'ready',
        at,
        expiresAt: new Date(at.getTime() + deps.ttlHours * 3600 * 1000),
        bytes,
        files: manifest.counts.files,
        records: manifest.counts.records,
      });
      // Not running any more (the instance went, or another attempt finished first): the archive is nobody's.
      if (!finished) await deps.store.remove(key);
      return { exported: finished, bytes };
    } catch (error) {
      if (isLastAttempt(job as Job)) {
        await deps.repository.finish(instanceId, id, { status: 'failed', at: deps.clock(), result: { message: errorMessage(error) } });
      }
      throw error;
    }
  };
}
