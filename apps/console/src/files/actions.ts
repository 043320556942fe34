// What the owner can do to a file, one call each, and the same over a selection. The API has no bulk
// call for most of these yet, so a selection is worked through a few files at a time.
import { call, errorText } from '../api';
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

/** Runs `action` on every file, four at a time; one failure does not stop the others. */
export async function forEachFile(fileIds: string[], action: (fileId: string) => Promise<unknown>, parallel = 4): Promise<Outcome> {
  const outcome: Outcome = { done: [], failed: [] };
  const queue = [...fileIds];
  const worker = async () => {
    for (let fileId = queue.shift(); fileId !== undefined; fileId = queue.shift()) {
      try {
        await action(fileId);
        outcome.done.push(fileId);
      } catch (error) {
        outcome.failed.push({ fileId, message: errorText(error) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, fileIds.length) }, worker));
  return outcome;
}
