// import-archive: reads the uploaded archive through once, changing nothing (every entry's SHA-256, the
// counts, the references); refuses it with a report when anything is wrong. Otherwise restores it
// (portability/restore.ts) in one transaction that also marks the row done: the instance shows all of it
// or none. A worker killed mid-way loses its lock and the job runs again: the dead attempt's transaction
// was rolled back by PostgreSQL, and the bytes it wrote are removed before the new attempt starts.
import type { Job } from 'bullmq';
import type { PortabilityRepository } from '@pds/db';
import { errorMessage, isLastAttempt, jobIds, type JobPayloads, type QUEUE_NAMES } from '@pds/queue';
import type { BlobStore } from '@pds/storage';
import type { ThumbnailQueue } from '../files/thumbnails';
import { importKey } from '../portability/keys';
import { ArchiveError } from '../portability/problems';
import { DEFAULT_READ_LIMITS, verifyArchive, type ReadLimits } from '../portability/reader';
import { removeFileObjects, restoreArchive, RestoreRefusal } from '../portability/restore';

export interface ImportArchiveDeps {
  repository: PortabilityRepository;
  store: BlobStore;
  clock: () => Date;
  limits?: Partial<ReadLimits>;
  /** Where restored images ask for their thumbnails; without it they have none until completed again. */
  thumbnails?: ThumbnailQueue;
}

const PROGRESS_EVERY_MS = 500;

type ImportJob = Pick<Job<JobPayloads[typeof QUEUE_NAMES.importArchive]>, 'data' | 'attemptsMade' | 'opts'>;

export function importArchiveProcessor(deps: ImportArchiveDeps) {
  const limits = { ...DEFAULT_READ_LIMITS, ...deps.limits };
  return async (job: ImportJob): Promise<{ imported: boolean; problem?: string }> => {
    const { instanceId, address, id } = job.data;
    const row = await deps.repository.find(instanceId, id, 'import');
    if (row?.status !== 'running') return { imported: false };
    const key = importKey(address, id);
    const refuse = async (report: { problem: string; path?: string; message: string }) => {
      // The archive goes first: a client that sees the row failed finds nothing left of it.
      await deps.store.remove(key);
      await deps.repository.finish(instanceId, id, { status: 'failed', at: deps.clock(), result: report });
      return { imported: false, problem: report.problem };
    };
    const archive = async function* () {
      const blob = await deps.store.read(key);
      if (!blob) throw new ArchiveError('truncated', 'the uploaded archive is gone');
      yield* blob.stream as AsyncIterable<Buffer>;
    };
    try {
      const verified = await verifyArchive(archive(), limits);
      if (!verified.ok) return await refuse({ problem: verified.problem, path: verified.path, message: verified.message });
      const total = Math.max(1, verified.manifest.counts.files + verified.manifest.counts.records);
      await deps.repository.progress(instanceId, id, { files: 0, records: 0, progress: 0.5 });
      // Bytes a crashed attempt left (no row points at them: the instance is empty or restore refuses).
      if (await deps.repository.isEmpty(instanceId)) await removeFileObjects(deps.store, address);
      let last = 0;
      const restored = await restoreArchive({
        repository: deps.repository,
        store: deps.store,
        instance: { id: instanceId, address },
        archive,
        limits,
        now: deps.clock(),
        onProgress: (done) => {
          const now = Date.now();
          if (now - last < PROGRESS_EVERY_MS) return;
          last = now;
          const progress = 0.5 + Math.min(0.49, (done.files + done.records) / total / 2);
          void deps.repository.progress(instanceId, id, { ...done, progress }).catch(() => undefined);
        },
        commit: async (restorer, counts) => {
          await restorer.finishJob(id, { status: 'done', at: deps.clock(), result: counts, files: counts.files, records: counts.records });
        },
      });
      await deps.store.remove(key);
      for (const fileId of restored.pictures) {
        // A lost request costs a thumbnail, not the import.
        await deps.thumbnails?.enqueue({ instanceId, address, fileId }, jobIds.thumbnail(instanceId, fileId)).catch(() => undefined);
      }
      return { imported: true };
    } catch (error) {
      if (error instanceof ArchiveError || error instanceof RestoreRefusal)
        return refuse({
          problem: error instanceof ArchiveError ? error.problem : error.problem,
          path: (error as ArchiveError).path,
          message: error.message,
        });
      if (isLastAttempt(job as Job)) await refuse({ problem: 'failed', message: errorMessage(error) });
      throw error;
    }
  };
}
