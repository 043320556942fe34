// A file's state and access in the words people use ("Uploaded", "Only you", "Public link"), not the
// API's ("Completed", contentPublic, permissions).
import type { FileRecord } from '../types';

export function stateWords(file: FileRecord): string {
  const { status } = file.status;
  return status === 'Completed' ? 'Uploaded' : status === 'New' ? 'Uploading…' : 'Deleted';
}

/** The accounts other than the viewer that were given the file (listed to the owner only). */
export const sharedWith = (file: FileRecord, viewerId: string): string[] =>
  (file.permissions ?? []).map((permission) => permission.userId).filter((userId) => userId !== viewerId);

/**
 * Who can see the file, for its owner: "Public link", "Shared with bob", "Shared with 2 people",
 * "Only you". Other viewers see only whether it is public: the API does not tell them who else has it.
 */
export function accessWords(file: FileRecord, viewerId: string, nameOf: (userId: string) => string | undefined): string | undefined {
  if (file.contentPublic) return 'Public link';
  if (!file.permissions) return undefined;
  const others = sharedWith(file, viewerId);
  if (others.length === 0) return 'Only you';
  if (others.length === 1) return `Shared with ${nameOf(others[0] as string) ?? '1 person'}`;
  return `Shared with ${others.length} people`;
}
