// thumbnail: makes the small picture of a completed image and stores it beside the file's bytes
// (thumbnailKey of @pds/storage), then marks the file as having one. Idempotent: a job that runs again
// makes the same picture again. A file deleted meanwhile keeps nothing: its row is no longer Completed,
// so the flag is not set and the picture just written is removed.
import { Readable } from 'node:stream';
import type { Job } from 'bullmq';
import type { FileRepository } from '@pds/db';
import type { JobPayloads, QUEUE_NAMES } from '@pds/queue';
import { objectKey, thumbnailKey, type BlobStore } from '@pds/storage';
import { makeThumbnail } from '../files/thumbnail-image';
import { THUMBNAIL_CONTENT_TYPE } from '../files/thumbnails';

/** Larger files get no thumbnail: their bytes are read whole into memory to be decoded. */
export const MAX_THUMBNAIL_INPUT_BYTES = 32 * 1024 * 1024;

export interface ThumbnailDeps {
  files: FileRepository;
  store: BlobStore;
  maxInputBytes?: number;
}

export type ThumbnailOutcome = { made: true; bytes: number } | { made: false; reason: string };

export function thumbnailProcessor(deps: ThumbnailDeps) {
  const maxInputBytes = deps.maxInputBytes ?? MAX_THUMBNAIL_INPUT_BYTES;
  return async (job: Pick<Job<JobPayloads[typeof QUEUE_NAMES.thumbnail]>, 'data'>): Promise<ThumbnailOutcome> => {
    const { instanceId, address, fileId } = job.data;
    const file = await deps.files.find(instanceId, fileId);
    if (!file || file.status !== 'Completed') return { made: false, reason: 'the file is not completed' };
    const key = thumbnailKey(address, fileId);
    const bytes = Number(file.size) <= maxInputBytes ? await readAll(deps.store, objectKey(address, fileId), maxInputBytes) : null;
    const picture = bytes && (await makeThumbnail(bytes));
    if (!picture) {
      // New bytes that are no image (completed again) leave no stale picture behind.
      if (file.thumbnail && (await deps.files.setThumbnail(instanceId, fileId, null))) await deps.store.remove(key);
      return { made: false, reason: bytes ? 'not an accepted image' : 'no bytes, or more than the limit' };
    }
    await deps.store.write(key, Readable.from([picture.bytes]), { contentType: THUMBNAIL_CONTENT_TYPE });
    if (!(await deps.files.setThumbnail(instanceId, fileId, { width: picture.width, height: picture.height, taken: picture.taken }))) {
      await deps.store.remove(key);
      return { made: false, reason: 'the file was deleted meanwhile' };
    }
    return { made: true, bytes: picture.bytes.length };
  };
}

/** The object's bytes, or null when there are none or more than `limit` (counted, not trusted from the row). */
async function readAll(store: BlobStore, key: string, limit: number): Promise<Buffer | null> {
  const blob = await store.read(key);
  if (!blob) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of blob.stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      blob.stream.destroy();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
