// Makes a thumbnail of image bytes with sharp (libvips), within bounds: the bytes are read whole but only
// up to a size limit (the job checks), decoding refuses images of more pixels than a limit before it
// allocates them, and only the formats the product accepts are decoded (libvips would also read SVG,
// HEIF, TIFF… whatever the bytes claim, not the name). Used by the worker only: sharp is a native module.
import sharp from 'sharp';
import { THUMBNAIL_INPUT_FORMATS, THUMBNAIL_PIXELS } from './thumbnails';

/** 40 megapixels: any camera photo, not a decompression bomb (a 1 MB PNG can claim 1 Gpx). */
export const MAX_INPUT_PIXELS = 40_000_000;

// One libvips thread per image: the worker runs a few jobs at once on a small machine.
sharp.concurrency(1);

/** The WebP thumbnail (≤ THUMBNAIL_PIXELS on its longest side) of an accepted image, or null for anything else. */
export async function makeThumbnail(bytes: Buffer): Promise<Buffer | null> {
  const options = { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' as const };
  let format: string | undefined;
  try {
    format = (await sharp(bytes, options).metadata()).format;
  } catch {
    return null;
  }
  if (!THUMBNAIL_INPUT_FORMATS.some((accepted) => accepted === format)) return null;
  try {
    return await sharp(bytes, options)
      // Upright as the camera meant it (EXIF orientation), then shrunk; metadata is not carried over.
      .rotate()
      .resize(THUMBNAIL_PIXELS, THUMBNAIL_PIXELS, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 70 })
      .toBuffer();
  } catch {
    // Truncated or corrupt, or over the pixel limit: no thumbnail, the type icon stays.
    return null;
  }
}
