// The three-step upload: metadata (POST /files/upload) → bytes → complete. Small files go in one PUT to
// the signed address (XHR, for its upload progress); large ones through tus (resumable-upload.ts), so a
// reload or a lost network costs only what was in flight, and choosing the same file again continues it.
import type { DetailedError } from 'tus-js-client';
import { call } from './api';
import type { ResumableProgress } from './resumable-upload';
import type { FileRecord } from './types';

/** Files from this size go through tus. */
export const RESUMABLE_FROM = 8 * 1024 * 1024;

export function putBytes(url: string, file: File, onProgress: (fraction: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.setRequestHeader('x-amz-server-side-encryption', 'AES256');
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => (xhr.status >= 200 && xhr.status < 300 ? resolve() : reject(new Error(`Upload refused (${xhr.status})`)));
    xhr.onerror = () => reject(new Error('Upload failed: the storage could not be reached'));
    xhr.send(file);
  });
}

const complete = (fileId: string) => call<FileRecord>(`/api/v2.6/files/file/${encodeURIComponent(fileId)}/complete`, { method: 'PUT' });
const start = (file: File, source: string) =>
  call<FileRecord>('/api/v2.6/files/upload', { method: 'POST', body: { name: file.name, source } });

/** `onProgress` hears how much is stored (0–1), and whether the upload waits for the network to come back. */
export async function uploadFile(file: File, source: string, onProgress: (progress: ResumableProgress) => void): Promise<FileRecord> {
  if (file.size >= RESUMABLE_FROM) return uploadResumably(file, source, onProgress);
  const created = await start(file, source);
  if (!created.contentUrl) throw new Error('The server gave no upload address');
  await putBytes(created.contentUrl, file, (fraction) => onProgress({ fraction }));
  onProgress({ fraction: 1 });
  return complete(created.fileId);
}

/** Continues this file's unfinished upload when there is one (its file still New), else starts a new one. */
async function uploadResumably(file: File, source: string, onProgress: (progress: ResumableProgress) => void): Promise<FileRecord> {
  // Loaded with the first large file: most sessions never send one.
  const { forget, previousUpload, sendResumably } = await import('./resumable-upload');
  const earlier = await previousUpload(file);
  if (earlier) {
    try {
      await sendResumably(file, earlier.fileId, earlier.previous, onProgress);
      return await complete(earlier.fileId);
    } catch (error) {
      // Its file was deleted or completed meanwhile, or the upload expired: this one starts afresh.
      const status = (error as DetailedError).originalResponse?.getStatus();
      if (status === undefined || status < 400 || status >= 500) throw error;
      forget(earlier.previous);
    }
  }
  const created = await start(file, source);
  await sendResumably(file, created.fileId, undefined, onProgress);
  return complete(created.fileId);
}
