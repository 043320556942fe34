// The three-step upload: metadata (POST /files/upload) → bytes to the signed address (XHR, for its
// upload progress) → complete.
import { call } from './api';
import type { FileRecord } from './types';

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

export async function uploadFile(file: File, source: string, onProgress: (fraction: number) => void): Promise<FileRecord> {
  const created = await call<FileRecord>('/api/v2.6/files/upload', { method: 'POST', body: { name: file.name, source } });
  if (!created.contentUrl) throw new Error('The server gave no upload address');
  await putBytes(created.contentUrl, file, onProgress);
  onProgress(1);
  return call<FileRecord>(`/api/v2.6/files/file/${encodeURIComponent(created.fileId)}/complete`, { method: 'PUT' });
}
