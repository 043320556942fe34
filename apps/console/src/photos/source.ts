// Where the photo timeline comes from: pages of GET /api/v2.6/files/photos, each after the cursor of the
// page before. Its signed addresses live a few minutes (SIGNED_URL_TTL), so a page is read again, from
// the same cursor, when its pictures are shown after that.
import { call } from '../api';

export interface Photo {
  fileId: string;
  name: string;
  /** ISO time: the day and month it is shown under. */
  date: string;
  /** The clock where it was taken, without a zone, when its EXIF says: the day it is shown under. */
  localDate?: string;
  /** The thumbnail's pixels (the picture's proportions); absent for thumbnails made before sizes were kept. */
  width?: number;
  height?: number;
  thumbnailUrl: string;
  contentUrl: string;
}

export interface PhotoPage {
  photos: Photo[];
  next: string | null;
  total?: number;
}

/** Pictures per page: a few screens of a wide window. */
export const PHOTO_PAGE = 200;

export function readPhotos(cursor: string | undefined): Promise<PhotoPage> {
  const query = new URLSearchParams({ take: String(PHOTO_PAGE) });
  if (cursor) query.set('cursor', cursor);
  return call<PhotoPage>(`/api/v2.6/files/photos?${query}`);
}
