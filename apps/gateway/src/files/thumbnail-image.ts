// Makes a thumbnail of image bytes with sharp (libvips), within bounds: the bytes are read whole but only
// up to a size limit (the job checks), decoding refuses images of more pixels than a limit before it
// allocates them, and only the formats the product accepts are decoded (libvips would also read SVG,
// HEIF, TIFF… whatever the bytes claim, not the name). Used by the worker only: sharp is a native module.
import exifReader from 'exif-reader';
import sharp from 'sharp';
import { THUMBNAIL_INPUT_FORMATS, THUMBNAIL_PIXELS } from './thumbnails';

/** 40 megapixels: any camera photo, not a decompression bomb (a 1 MB PNG can claim 1 Gpx). */
export const MAX_INPUT_PIXELS = 40_000_000;

// One libvips thread per image: the worker runs a few jobs at once on a small machine.
sharp.concurrency(1);

export interface Thumbnail {
  bytes: Buffer;
  /** Its size in pixels: the picture's proportions, upright. */
  width: number;
  height: number;
  /** When the picture was taken, as its EXIF says; null when it does not. */
  taken: Taken | null;
}

/** When a picture was taken: the instant, and the clock where it was taken (its UTC fields are that clock's). */
export interface Taken {
  at: Date;
  local: Date;
}

/** The WebP thumbnail (≤ THUMBNAIL_PIXELS on its longest side) of an accepted image, or null for anything else. */
export async function makeThumbnail(bytes: Buffer): Promise<Thumbnail | null> {
  const options = { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' as const };
  let format: string | undefined;
  let exif: Buffer | undefined;
  try {
    ({ format, exif } = await sharp(bytes, options).metadata());
  } catch {
    return null;
  }
  if (!THUMBNAIL_INPUT_FORMATS.some((accepted) => accepted === format)) return null;
  try {
    const { data, info } = await sharp(bytes, options)
      // Upright as the camera meant it (EXIF orientation), then shrunk; metadata is not carried over.
      .rotate()
      .resize(THUMBNAIL_PIXELS, THUMBNAIL_PIXELS, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 70 })
      .toBuffer({ resolveWithObject: true });
    return { bytes: data, width: info.width, height: info.height, taken: exif ? whenTaken(exif) : null };
  } catch {
    // Truncated or corrupt, or over the pixel limit: no thumbnail, the type icon stays.
    return null;
  }
}

/** The earliest year a picture's EXIF date is believed: cameras without a clock write 1970 or 0000. */
const FIRST_BELIEVED_YEAR = 1980;

/**
 * DateTimeOriginal (else DateTimeDigitized): the clock where the picture was taken, and the instant it
 * names at its OffsetTime when the camera wrote one, read as UTC when it did not (the zone is then
 * unknown: only the timeline's order uses the instant; its days use the clock). Null for a date that is
 * unreadable, implausibly early, or later than now.
 */
export function whenTaken(exif: Buffer, now = new Date()): Taken | null {
  let photo: ReturnType<typeof exifReader>['Photo'];
  try {
    photo = exifReader(exif).Photo;
  } catch {
    return null;
  }
  const [date, offset] = photo?.DateTimeOriginal
    ? [photo.DateTimeOriginal, photo.OffsetTimeOriginal]
    : [photo?.DateTimeDigitized, photo?.OffsetTimeDigitized];
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) return null;
  const zone = typeof offset === 'string' ? /^([+-])(\d\d):(\d\d)$/.exec(offset) : null;
  const minutes = zone ? (zone[1] === '-' ? -1 : 1) * (Number(zone[2]) * 60 + Number(zone[3])) : 0;
  const at = new Date(date.getTime() - minutes * 60_000);
  return at.getUTCFullYear() >= FIRST_BELIEVED_YEAR && at <= now ? { at, local: date } : null;
}
