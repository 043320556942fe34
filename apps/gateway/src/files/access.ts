// Every file access decision, in one place (CONTRACT §2, spec §5.7). Callers are the instance owner
// (own login token), accounts of the instance (users, and apps acting as their own accounts), or
// anonymous. Beyond the owner, access comes only from permission rows: the uploader holds one by
// default (so the owner can revoke it), a grant gives metadata or metadata and content, and a public
// file's content is readable by anyone. Public does not reveal metadata to strangers.
import { ApiError } from '@pds/http';
import type { FileRecord, FileScope } from '@pds/db';
import { isOwner, type Caller } from '../context';

export type Viewer = { kind: 'owner'; userId: string } | { kind: 'account'; userId: string } | { kind: 'anonymous' };

export function viewerOf(caller: Caller | undefined): Viewer {
  if (!caller) return { kind: 'anonymous' };
  return { kind: isOwner(caller) ? 'owner' : 'account', userId: caller.user.id };
}

export interface FileRights {
  /** Metadata: get, search, complete. */
  see: boolean;
  /** Content, whatever the file's state (contentReadable below adds the state rule). */
  readContent: boolean;
  /** Delete, grants, visibility. */
  manage: boolean;
}

/** What access decisions read of a file (a full record, or a search hit). */
type FileAccessFacts = Pick<FileRecord, 'status' | 'contentPublic' | 'permissions'>;

export function rightsOn(viewer: Viewer, file: FileAccessFacts): FileRights {
  if (viewer.kind === 'owner') return { see: true, readContent: true, manage: true };
  const permission = viewer.kind === 'account' ? file.permissions.find((p) => p.userId === viewer.userId) : undefined;
  return { see: permission !== undefined, readContent: file.contentPublic || permission?.contentReadable === true, manage: false };
}

/** Whether the caller gets a content address: content rights on a Completed file. */
export function contentReadable(viewer: Viewer, file: FileAccessFacts): boolean {
  return file.status === 'Completed' && rightsOn(viewer, file).readContent;
}

/** Permission lists are the owner's business only. */
export function showsPermissions(viewer: Viewer): boolean {
  return viewer.kind === 'owner';
}

/** The same 404 for a missing file and one the caller may not see, so ids cannot be probed. */
export function fileNotFound(fileId: string): ApiError {
  return ApiError.notFound(`File ${fileId} not found`);
}

/** The file, if the caller may see it; else the 404 of a missing file. */
export function requireVisible<F extends FileAccessFacts>(viewer: Viewer, file: F | null, fileId: string): F {
  if (!file || !rightsOn(viewer, file).see) throw fileNotFound(fileId);
  return file;
}

/** The file, if the caller may manage it; 404 when it cannot even see it, 403 when it only sees it. */
export function requireManageable(viewer: Viewer, file: FileRecord | null, fileId: string): FileRecord {
  const visible = requireVisible(viewer, file, fileId);
  if (!rightsOn(viewer, visible).manage) throw ApiError.forbidden('Only the owner of this instance may do this');
  return visible;
}

/**
 * The file, if the caller may change its name, tags, title and description: the owner, and the
 * account that uploaded it while it can still see it. 404 when it cannot see it, 403 when it only sees it.
 */
export function requireEditable(viewer: Viewer, file: FileRecord | null, fileId: string): FileRecord {
  const visible = requireVisible(viewer, file, fileId);
  const uploader = viewer.kind === 'account' && visible.uploaderId === viewer.userId;
  if (viewer.kind !== 'owner' && !uploader) throw ApiError.forbidden("Only the owner or the file's uploader may change its metadata");
  return visible;
}

/** The file, if its content may be served to the caller (public, or content rights) and it is Completed. */
export function requireContent<F extends FileAccessFacts>(viewer: Viewer, file: F | null, fileId: string): F {
  if (!file || !contentReadable(viewer, file)) throw fileNotFound(fileId);
  return file;
}

/** Owner-only calls that name no file (bulk grants): 403 for anyone else. */
export function requireOwner(viewer: Viewer): void {
  if (viewer.kind !== 'owner') throw ApiError.forbidden('Only the owner of this instance may do this');
}

/** Which files a search may return for this caller. */
export function searchScope(viewer: Viewer): FileScope {
  if (viewer.kind === 'owner') return { all: true };
  if (viewer.kind === 'account') return { userId: viewer.userId };
  throw ApiError.notAuthenticated();
}
