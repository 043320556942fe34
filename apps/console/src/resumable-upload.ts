// Step 2 of a large file's upload through tus (tus-js-client, /api/v2.6/files/tus): the bytes go over as
// many requests as it takes, and an upload cut short (a reload, a closed tab, a lost network) continues
// where the server says it got. tus-js-client remembers each upload's address in localStorage under the
// file's fingerprint (name, type, size, last change), with the file id of its step 1: choosing the same
// file again resumes that upload into that file instead of starting another.
import { Upload, type UploadOptions } from 'tus-js-client';
import { currentSession } from './session';

export const TUS_ENDPOINT = '/api/v2.6/files/tus';

/** Waits after a failed request before trying again; then the upload fails (the network being down does not count). */
const RETRY_DELAYS = [0, 1000, 3000, 5000, 10000, 20000, 30000];

/** An unfinished upload tus-js-client remembers. */
export type PreviousUpload = Awaited<ReturnType<Upload['findPreviousUploads']>>[number];

export interface ResumableProgress {
  /** 0–1 of the file stored. */
  fraction: number;
  /** The network is gone: the upload goes on once it is back. */
  waiting?: boolean;
}

/** The file id an earlier, unfinished upload of this file went to, and that upload; undefined when there is none. */
export async function previousUpload(file: File): Promise<{ fileId: string; previous: PreviousUpload } | undefined> {
  for (const previous of await new Upload(file, options({})).findPreviousUploads()) {
    const fileId = previous.metadata.fileId;
    if (fileId) return { fileId, previous };
  }
  return undefined;
}

/** Forgets an upload that cannot go on (its file was deleted, or it expired): tus-js-client keeps it in localStorage. */
export function forget(previous: PreviousUpload): void {
  localStorage.removeItem(previous.urlStorageKey);
}

/** Sends `file` into the New file `fileId`, resuming `previous` when given; resolves once every byte is stored. */
export function sendResumably(
  file: File,
  fileId: string,
  previous: PreviousUpload | undefined,
  onProgress: (progress: ResumableProgress) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let fraction = 0;
    const upload = new Upload(
      file,
      options({
        metadata: { fileId, filename: file.name, filetype: file.type || 'application/octet-stream' },
        onProgress: (sent, total) => {
          fraction = total ? sent / total : 0;
          onProgress({ fraction });
        },
        onSuccess: () => resolve(),
        onError: (error) => {
          if (navigator.onLine) return reject(error);
          // Offline, tus-js-client stops trying; the upload goes on from where the server got once the network is back.
          onProgress({ fraction, waiting: true });
          window.addEventListener('online', () => upload.start(), { once: true });
        },
      }),
    );
    if (previous) upload.resumeFromPreviousUpload(previous);
    upload.start();
  });
}

function options(more: Partial<UploadOptions>): UploadOptions {
  return {
    endpoint: TUS_ENDPOINT,
    retryDelays: RETRY_DELAYS,
    // Found again by the file itself once it is chosen again; forgotten once stored.
    storeFingerprintForResuming: true,
    removeFingerprintOnSuccess: true,
    // The session's token as it is now: the sliding session replaces it while a long upload runs.
    onBeforeRequest: (req) => {
      const token = currentSession()?.token;
      if (token) req.setHeader('X-Auth-Token', token);
    },
    ...more,
  };
}
