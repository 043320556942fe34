// Thumbnails: which files get one, and what one is. The job (jobs/thumbnail.ts) makes them in the worker
// with sharp (thumbnail-image.ts); the gateway only asks for them and signs addresses of stored ones.
import { extensionOf } from '@pds/console/kinds';

/** Formats sharp decodes that the product accepts as input (GIF: the first frame). */
export const THUMBNAIL_INPUT_FORMATS = ['jpeg', 'png', 'webp', 'gif'] as const;

/** Names whose extension says one of those formats; the job checks the bytes themselves before decoding. */
const EXTENSIONS = new Set(['jpg', 'jpeg', 'jpe', 'png', 'webp', 'gif']);

export const THUMBNAIL_CONTENT_TYPE = 'image/webp';
/** The longest side of a thumbnail, in pixels (a grid card is at most 160 CSS px wide, twice for dense screens). */
export const THUMBNAIL_PIXELS = 320;

/** Whether a completed file of this name is worth a thumbnail job. */
export function takesThumbnail(name: string): boolean {
  return EXTENSIONS.has(extensionOf(name));
}

/** Where a thumbnail job is asked for (the gateway's producer of @pds/queue's thumbnail queue). */
export interface ThumbnailQueue {
  enqueue(payload: { instanceId: string; address: string; fileId: string }, jobId: string): Promise<unknown>;
}
