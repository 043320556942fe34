// What the owner can do to a file, one call each, and the same over a selection (one bulk call), and a
// selection's download as one zip.
import { call } from '../api';
import type { FileRecord } from '../types';

const FILES = '/api/v2.6/files';
const id = encodeURIComponent;

export const getFile = (fileId: string) => call<FileRecord>(`${FILES}/file/${id(fileId)}`);

export const setPublic = (fileId: string, makePublic: boolean) =>
  call<FileRecord>(`${FILES}/${makePublic ? 'allowAccessPublic' : 'restrictAccessPublic'}/${id(fileId)}`);

/** Lets a user see the file; `content` lets them read its bytes too. */
export const share = (fileId: string, userId: string, content: boolean) =>
  call<FileRecord>(`${FILES}/allowAccess/${id(fileId)}/${id(userId)}?content=${content}`);

export const unshare = (fileId: string, userId: string) => call<FileRecord>(`${FILES}/restrictAccess/${id(fileId)}/${id(userId)}`);

export const deleteFile = (fileId: string) => call<FileRecord>(`${FILES}/file/${id(fileId)}`, { method: 'DELETE' });

/** Brings a file back from the trash (owner only), with its bytes and sharing. */
export const restoreFile = (fileId: string) => call<FileRecord>(`${FILES}/trash/${id(fileId)}/restore`, { method: 'POST' });

export type Details = Pick<FileRecord, 'name' | 'title' | 'description' | 'tags'>;

/** PUT replaces every descriptive field (an absent one is cleared), so the unchanged ones are sent as they are. */
export function saveDetails(file: FileRecord, changes: Partial<Details>): Promise<FileRecord> {
  const details = { name: file.name, title: file.title, description: file.description, tags: file.tags ?? [], ...changes };
  return call<FileRecord>(`${FILES}/file/${id(file.fileId)}`, {
    method: 'PUT',
    body: { ...details, title: details.title || undefined, description: details.description || undefined },
  });
}

/** "home, food" → ["home", "food"]. */
export const parseTags = (text: string): string[] => [...new Set(text.split(',').map((tag) => tag.trim()))].filter(Boolean);

export interface Outcome {
  done: string[];
  failed: { fileId: string; message: string }[];
}

export type BulkAction = 'delete' | 'share' | 'unshare' | 'public' | 'private';

/** The most files one bulk call or one zip names (the server's limit). */
export const MAX_SELECTION = 1000;

interface BulkResult {
  updated: FileRecord[];
  failed: { fileId: string; error: string; message: string }[];
}

/**
 * One action on every file of a selection, owner only: one call per thousand files. Files that could
 * not be changed are listed in the outcome; they do not stop the others.
 */
export async function bulk(fileIds: string[], action: BulkAction, share?: { userId: string; content: boolean }): Promise<Outcome> {
  const outcome: Outcome = { done: [], failed: [] };
  for (let start = 0; start < fileIds.length; start += MAX_SELECTION) {
    const result = await call<BulkResult>(`${FILES}/bulk`, {
      method: 'POST',
      body: { fileIds: fileIds.slice(start, start + MAX_SELECTION), action, ...share },
    });
    outcome.done.push(...result.updated.map((file) => file.fileId));
    outcome.failed.push(...result.failed.map(({ fileId, message }) => ({ fileId, message })));
  }
  return outcome;
}

/**
 * Downloads the files as one zip made by the server: a signed address, then a navigation to it (a
 * download carries no token header, so the address itself is the permission).
 */
export async function downloadZip(fileIds: string[]): Promise<void> {
  const { url } = await call<{ url: string; name: string }>(`${FILES}/archive`, { method: 'POST', body: { fileIds } });
  location.assign(url);
}
