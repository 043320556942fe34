// The rules of the Files API (CONTRACT §2): states, ids, signed addresses. Who may do what is asked
// of access.ts; every query goes through the tenant-scoped FileRepository.
import { z } from 'zod';
import {
  QuotaExceeded,
  type Actor,
  type FileListing,
  type FileMetadata,
  type FileRecord,
  type FileRepository,
  type FileTemplate,
  type ListingQuery,
  type Page,
  type UserRepository,
} from '@pds/db';
import { EXTENSIONS } from '@pds/console/kinds';
import { ApiError, toApiError } from '@pds/http';
import { type Logger } from '@pds/runtime';
import { jobIds } from '@pds/queue';
import { objectKey, thumbnailKey, type BlobStore } from '@pds/storage';
import type { Clock } from '@pds/tokens';
import type { Caller } from '../context';
import type { ResolvedInstance } from '../instances/registry';
import {
  contentReadable,
  fileNotFound,
  requireContent,
  requireEditable,
  requireManageable,
  requireOwner,
  requireVisible,
  searchScope,
  showsPermissions,
  viewerOf,
  type Viewer,
} from './access';
import { encodePhotoCursor, type BulkInput, type ListingInput, type PhotosInput } from './input';
import { fileIdStem } from './slug';
import { takesThumbnail, type ThumbnailQueue } from './thumbnails';
import { settleFile } from './trash-moves';
import { fileView, type FileJson } from './view';

export interface NewFileInput {
  name: string;
  source: string;
  tags?: string[];
  title?: string;
  description?: string;
  dateCreated?: Date;
}

export interface FileServiceDeps {
  files: FileRepository;
  users: UserRepository;
  /** Resumable uploads under way: a deleted file's are ended with it. */
  resumable?: { endAll(tenant: ResolvedInstance, fileId: string): Promise<void> };
  store: BlobStore;
  clock: Clock;
  signedUrlTtl: number;
  /** MAX_UPLOAD_BYTES. The local store refuses more while receiving; S3 (presigned PUT) only here. */
  maxUploadBytes: number;
  /** Public base URL of an instance address: where local-store addresses are served. */
  baseUrl: (address: string) => string;
  /** Where completed images are sent to get a thumbnail; without it none are made. */
  thumbnails?: ThumbnailQueue;
  logger: Logger;
}

export interface ListingJson {
  files: FileJson[];
  total: number;
  totalBytes: number;
}

/** One picture of the timeline, with signed addresses of its thumbnail and its content. */
export interface PhotoJson {
  fileId: string;
  name: string;
  /** When it was taken (its EXIF date, else the file's dateCreated): the timeline's order. */
  date: string;
  /** The clock where it was taken, without a zone, when its EXIF says: the day it is shown under. */
  localDate?: string;
  /** The thumbnail's size in pixels (the picture's proportions); absent for thumbnails made before sizes were kept. */
  width?: number;
  height?: number;
  thumbnailUrl: string;
  contentUrl: string;
}

export interface PhotosJson {
  photos: PhotoJson[];
  /** The cursor of the next page; null after the last. */
  next: string | null;
  /** How many pictures there are: on the first page only (no cursor). */
  total?: number;
}

export interface BulkJson {
  updated: FileJson[];
  failed: { fileId: string; error: string; message: string }[];
}

/** How many files a bulk delete works on at once (each is a store call and a statement). */
const DELETE_PARALLEL = 8;
/** The most tags a tag list holds. */
const MAX_TAGS = 1000;
const KNOWN_EXTENSIONS = Object.values(EXTENSIONS).flat();

type FileInput = { fileId: string };
type GrantInput = { fileId: string; userId: string };

/** Every method takes the instance, the caller (undefined: no token) and its input, as every service does. */
export class FileService {
  constructor(private readonly deps: FileServiceDeps) {}

  /** Writes the New file with the uploader's permission and returns it with a signed PUT address. */
  async upload(tenant: ResolvedInstance, caller: Caller, input: NewFileInput): Promise<FileJson> {
    const viewer = viewerOf(caller) as Extract<Viewer, { userId: string }>;
    const now = this.deps.clock();
    const file = await this.deps.files.create(
      tenant.instance.id,
      fileIdStem(input.source, input.name),
      {
        name: input.name,
        source: input.source,
        tags: input.tags ?? [],
        title: input.title,
        description: input.description,
        uploaderId: viewer.userId,
        dateCreated: input.dateCreated ?? now,
        now,
      },
      caller.actor,
    );
    const contentUrl = await this.deps.store.presignPut(this.key(tenant, file.fileId), this.signing(tenant));
    // The uploader learns its own permission entry even when it is not the owner (CONTRACT §2).
    return fileView(file, { permissions: true, contentUrl });
  }

  /** New → Completed once the bytes are there; completing again re-reads the size. */
  async complete(tenant: ResolvedInstance, caller: Caller, { fileId }: FileInput): Promise<FileJson> {
    const viewer = viewerOf(caller);
    const file = requireVisible(viewer, await this.find(tenant, fileId), fileId);
    if (file.status === 'Deleted') throw ApiError.conflict(`File ${fileId} has been deleted`);
    const size = await this.deps.store.stat(this.key(tenant, fileId));
    if (size === null) throw ApiError.conflict(`File ${fileId} has not been uploaded`);
    if (size > this.deps.maxUploadBytes) {
      // A presigned S3 PUT cannot cap its size: the bytes are checked here and dropped. The row stays
      // New, so the client may upload again within the deadline.
      await this.deps.store.remove(this.key(tenant, fileId));
      throw ApiError.tooLarge(`File ${fileId} is ${size} bytes, over the limit of ${this.deps.maxUploadBytes}; its bytes were removed`);
    }
    if (file.status === 'Completed' && Number(file.size) === size) return this.present(tenant, viewer, file);
    const completed = await this.deps.files
      .complete(tenant.instance.id, fileId, size, this.deps.clock(), caller.actor)
      .catch(async (error: unknown) => {
        if (!(error instanceof QuotaExceeded)) throw error;
        // Bytes that do not fit are not kept, on either store; the row stays as it was.
        await this.deps.store.remove(this.key(tenant, fileId));
        throw ApiError.tooLarge(`File ${fileId} (${size} bytes) does not fit in this instance's storage quota; its bytes were removed`);
      });
    // A delete that won the race leaves nothing to complete.
    if (!completed) throw ApiError.conflict(`File ${fileId} has been deleted`);
    await this.askThumbnail(tenant, completed);
    return this.present(tenant, viewer, completed);
  }

  async get(tenant: ResolvedInstance, caller: Caller, { fileId }: FileInput): Promise<FileJson> {
    const viewer = viewerOf(caller);
    const file = requireVisible(viewer, await this.deps.files.findListing(tenant.instance.id, fileId), fileId);
    return this.present(tenant, viewer, file);
  }

  /** The signed GET address of a file's content; the same 404 for missing and forbidden. */
  async contentAddress(tenant: ResolvedInstance, caller: Caller | undefined, { fileId }: FileInput): Promise<string> {
    const file = requireContent(viewerOf(caller), await this.deps.files.findListing(tenant.instance.id, fileId), fileId);
    return this.deps.store.presignGet(this.key(tenant, file.fileId), this.signing(tenant));
  }

  /**
   * Whether a signed upload address may still take bytes for `key`: its file exists and is not deleted
   * (the address may outlive it, and bytes no row points to would be orphans).
   */
  async acceptsUpload(tenant: ResolvedInstance, key: string): Promise<boolean> {
    const file = await this.find(tenant, key.slice(tenant.instance.address.length + 1));
    return file !== null && file.status !== 'Deleted';
  }

  async delete(tenant: ResolvedInstance, caller: Caller, { fileId }: FileInput): Promise<FileJson> {
    const viewer = viewerOf(caller);
    requireManageable(viewer, await this.find(tenant, fileId), fileId);
    return this.present(tenant, viewer, await this.remove(tenant, fileId, caller.actor));
  }

  async updateMetadata(
    tenant: ResolvedInstance,
    caller: Caller,
    { fileId, metadata }: FileInput & { metadata: FileMetadata },
  ): Promise<FileJson> {
    const viewer = viewerOf(caller);
    requireEditable(viewer, await this.find(tenant, fileId), fileId);
    const updated = await this.deps.files.updateMetadata(tenant.instance.id, fileId, metadata, this.deps.clock(), caller.actor);
    if (!updated) throw fileNotFound(fileId);
    return this.present(tenant, viewer, updated);
  }

  async setPublic(
    tenant: ResolvedInstance,
    caller: Caller,
    { fileId, contentPublic }: FileInput & { contentPublic: boolean },
  ): Promise<FileJson> {
    const viewer = viewerOf(caller);
    requireManageable(viewer, await this.find(tenant, fileId), fileId);
    const updated = await this.deps.files.setPublic(tenant.instance.id, fileId, contentPublic, this.deps.clock(), caller.actor);
    if (!updated) throw fileNotFound(fileId);
    return this.present(tenant, viewer, updated);
  }

  async grant(tenant: ResolvedInstance, caller: Caller, { fileId, userId, content }: GrantInput & { content: boolean }): Promise<FileJson> {
    const viewer = viewerOf(caller);
    requireManageable(viewer, await this.find(tenant, fileId), fileId);
    await this.requireUser(tenant, userId);
    const updated = await this.deps.files.grant(tenant.instance.id, fileId, userId, content, caller.actor);
    if (!updated) throw fileNotFound(fileId);
    return this.present(tenant, viewer, updated);
  }

  async revoke(tenant: ResolvedInstance, caller: Caller, { fileId, userId }: GrantInput): Promise<FileJson> {
    const viewer = viewerOf(caller);
    requireManageable(viewer, await this.find(tenant, fileId), fileId);
    await this.requireUser(tenant, userId);
    const updated = await this.deps.files.revoke(tenant.instance.id, fileId, userId, caller.actor);
    if (!updated) throw fileNotFound(fileId);
    return this.present(tenant, viewer, updated);
  }

  async grantMatching(
    tenant: ResolvedInstance,
    caller: Caller,
    { template, userId, content }: { template: FileTemplate; userId: string; content: boolean },
  ): Promise<FileJson[]> {
    const viewer = viewerOf(caller);
    requireOwner(viewer);
    await this.requireUser(tenant, userId);
    return this.presentAll(
      tenant,
      viewer,
      await this.deps.files.grantMatching(tenant.instance.id, template, userId, content, caller.actor),
    );
  }

  async revokeMatching(
    tenant: ResolvedInstance,
    caller: Caller,
    { template, userId }: { template: FileTemplate; userId: string },
  ): Promise<FileJson[]> {
    const viewer = viewerOf(caller);
    requireOwner(viewer);
    await this.requireUser(tenant, userId);
    return this.presentAll(tenant, viewer, await this.deps.files.revokeMatching(tenant.instance.id, template, userId, caller.actor));
  }

  /**
   * One page of the files the caller may see (the same scope as search), filtered and sorted, with how
   * many match and their bytes. The page and the totals are two statements sent at once.
   */
  async listing(tenant: ResolvedInstance, caller: Caller, input: ListingInput): Promise<ListingJson> {
    const viewer = viewerOf(caller);
    const scope = searchScope(viewer);
    if (input.shared !== undefined && viewer.kind !== 'owner') {
      throw ApiError.forbidden('Only the owner of this instance may filter by sharing');
    }
    const query: ListingQuery = {
      status: input.status,
      words: input.q,
      extensions:
        input.type === undefined ? undefined : input.type === 'other' ? { notOf: KNOWN_EXTENSIONS } : { of: EXTENSIONS[input.type] },
      tag: input.tag,
      shared: input.shared,
      contentPublic: input.public,
      sort: input.sort,
      descending: input.descending,
    };
    const [files, totals] = await Promise.all([
      this.deps.files.listing(tenant.instance.id, query, scope, { take: input.take, skip: input.skip }),
      this.deps.files.listingTotals(tenant.instance.id, query, scope),
    ]);
    const permissions = showsPermissions(viewer);
    const signing = this.signing(tenant);
    return { files: await Promise.all(files.map((file) => this.present(tenant, viewer, file, permissions, signing))), ...totals };
  }

  /**
   * A page of the photo timeline: the pictures (completed files with a thumbnail) the caller may read,
   * the most recently taken first, after the cursor of the page before; the first page also counts them.
   */
  async photos(tenant: ResolvedInstance, caller: Caller, { cursor, take }: PhotosInput): Promise<PhotosJson> {
    const instanceId = tenant.instance.id;
    const scope = searchScope(viewerOf(caller));
    const [found, total] = await Promise.all([
      // One more than asked says whether a next page exists.
      this.deps.files.photos(instanceId, scope, cursor, take + 1),
      cursor ? undefined : this.deps.files.photoCount(instanceId, scope),
    ]);
    const page = found.slice(0, take);
    const signing = this.signing(tenant);
    const address = tenant.instance.address;
    const photos = await Promise.all(
      page.map(async ({ fileId, name, takenAt, takenLocal, width, height }): Promise<PhotoJson> => {
        const [thumbnailUrl, contentUrl] = await Promise.all([
          this.deps.store.presignGet(thumbnailKey(address, fileId), signing),
          this.deps.store.presignGet(objectKey(address, fileId), signing),
        ]);
        const photo: PhotoJson = { fileId, name, date: takenAt } as PhotoJson;
        if (takenLocal !== null) photo.localDate = takenLocal;
        if (width !== null && height !== null) Object.assign(photo, { width, height });
        return Object.assign(photo, { thumbnailUrl, contentUrl });
      }),
    );
    const last = page[page.length - 1];
    return { photos, next: found.length > take && last ? encodePhotoCursor(last) : null, ...(total === undefined ? {} : { total }) };
  }

  /** Every tag on the completed files the caller may see, sorted (for a tag filter). */
  async tags(tenant: ResolvedInstance, caller: Caller): Promise<{ tags: string[] }> {
    return { tags: await this.deps.files.tags(tenant.instance.id, searchScope(viewerOf(caller)), MAX_TAGS) };
  }

  /** The signed GET address of a file's thumbnail: the rules of content, and the same 404 when there is none. */
  async thumbnailAddress(tenant: ResolvedInstance, caller: Caller | undefined, { fileId }: FileInput): Promise<string> {
    const file = requireContent(viewerOf(caller), await this.deps.files.findListing(tenant.instance.id, fileId), fileId);
    if (!file.thumbnail) throw ApiError.notFound(`File ${fileId} has no thumbnail`);
    return this.deps.store.presignGet(thumbnailKey(tenant.instance.address, fileId), this.signing(tenant));
  }

  /**
   * One action on a selection of files, owner only, under the rules of the single calls: sharing and
   * visibility in one transaction (one statement for visibility), deletes file by file as a single
   * delete runs. Files that do not exist, and deletes that failed, are listed apart; the rest are done.
   */
  async bulk(tenant: ResolvedInstance, caller: Caller, { fileIds, action, userId, content }: BulkInput): Promise<BulkJson> {
    const viewer = viewerOf(caller);
    requireOwner(viewer);
    const instanceId = tenant.instance.id;
    if (userId !== undefined && (action === 'share' || action === 'unshare')) await this.requireUser(tenant, userId);
    let updated: FileRecord[];
    let failed: BulkJson['failed'] = [];
    if (action === 'delete') ({ updated, failed } = await this.removeEach(tenant, fileIds, caller.actor));
    else if (action === 'share') updated = await this.deps.files.grantMany(instanceId, fileIds, userId as string, content, caller.actor);
    else if (action === 'unshare') updated = await this.deps.files.revokeMany(instanceId, fileIds, userId as string, caller.actor);
    else updated = await this.deps.files.setPublicMany(instanceId, fileIds, action === 'public', this.deps.clock(), caller.actor);
    const done = new Set([...updated.map((file) => file.fileId), ...failed.map((f) => f.fileId)]);
    const missing = fileIds.filter((fileId) => !done.has(fileId)).map((fileId) => failure(fileNotFound(fileId), fileId));
    return { updated: await this.presentAll(tenant, viewer, updated), failed: [...failed, ...missing] };
  }

  /** The files the caller may see that match, each rendered as `present` renders it. */
  async search(tenant: ResolvedInstance, caller: Caller, { template, page }: { template: FileTemplate; page: Page }): Promise<FileJson[]> {
    const viewer = viewerOf(caller);
    const files = await this.deps.files.search(tenant.instance.id, template, searchScope(viewer), page);
    // What is the same for every hit is worked out once per page.
    const permissions = showsPermissions(viewer);
    const signing = this.signing(tenant);
    return Promise.all(files.map((file) => this.present(tenant, viewer, file, permissions, signing)));
  }

  /**
   * A completed file goes to the trash (trash.ts): Deleted to every reader, its bytes kept under their
   * trash keys (trash-moves.ts), out of reach of every address issued before. A file in the trash stays
   * there as it is (a repeat finishes a move a crash cut short). Any other (an upload never completed)
   * goes as before the trash: its bytes first, then the row marked Deleted (a failure leaves a file that
   * can be deleted again), then its thumbnail if the row says one is stored. A thumbnail job that lands later finds the file Deleted and
   * removes what it wrote itself (jobs/thumbnail.ts): no interleaving leaves one behind.
   */
  private async remove(tenant: ResolvedInstance, fileId: string, actor: Actor): Promise<FileRecord> {
    const trashed = await this.deps.files.trash(tenant.instance.id, fileId, this.deps.clock(), actor);
    const file = trashed ?? (await this.find(tenant, fileId));
    if (file?.trashedAt) {
      await settleFile(this.deps, tenant.instance.id, tenant.instance.address, fileId);
      return file;
    }
    await this.deps.store.remove(this.key(tenant, fileId));
    const deleted = await this.deps.files.markDeleted(tenant.instance.id, fileId, this.deps.clock(), actor);
    if (!deleted) throw fileNotFound(fileId);
    await this.deps.resumable?.endAll(tenant, fileId);
    if (deleted.thumbnail) await this.deps.store.remove(thumbnailKey(tenant.instance.address, fileId));
    return deleted;
  }

  /** Deletes each existing file of `fileIds`, a few at a time; one failure does not stop the others. */
  private async removeEach(
    tenant: ResolvedInstance,
    fileIds: string[],
    actor: Actor,
  ): Promise<{ updated: FileRecord[]; failed: BulkJson['failed'] }> {
    const existing = await this.deps.files.findAll(tenant.instance.id, fileIds);
    const results: (FileRecord | BulkJson['failed'][number])[] = new Array(existing.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < existing.length; i = next++) {
        const fileId = (existing[i] as FileRecord).fileId;
        results[i] = await this.remove(tenant, fileId, actor).catch((error: unknown) => {
          const refusal = toApiError(error);
          if (refusal.status >= 500) this.deps.logger.error({ err: error, fileId }, 'bulk delete failed for one file');
          return failure(refusal, fileId);
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELETE_PARALLEL, existing.length) }, worker));
    const updated = results.filter((r): r is FileRecord => 'instanceId' in r);
    return { updated, failed: results.filter((r): r is BulkJson['failed'][number] => !('instanceId' in r)) };
  }

  /**
   * Asks for the thumbnail of a file that just completed, when its name says it is an image. Never fails
   * the completion: without the queue the file simply has no thumbnail until it is completed again.
   */
  private async askThumbnail(tenant: ResolvedInstance, file: FileRecord): Promise<void> {
    if (!this.deps.thumbnails || !takesThumbnail(file.name)) return;
    const payload = { instanceId: tenant.instance.id, address: tenant.instance.address, fileId: file.fileId };
    await this.deps.thumbnails.enqueue(payload, jobIds.thumbnail(payload.instanceId, payload.fileId)).catch((err: unknown) => {
      this.deps.logger.warn({ err, fileId: file.fileId }, 'could not ask for a thumbnail');
    });
  }

  private find(tenant: ResolvedInstance, fileId: string): Promise<FileRecord | null> {
    return this.deps.files.find(tenant.instance.id, fileId);
  }

  private async requireUser(tenant: ResolvedInstance, userId: string): Promise<void> {
    const user = z.uuid().safeParse(userId).success ? await this.deps.users.findById(tenant.instance.id, userId) : null;
    if (!user) throw ApiError.notFound(`User ${userId} not found`);
  }

  /** The record as this caller may see it: a fresh content address only with content rights. */
  private async present(
    tenant: ResolvedInstance,
    viewer: Viewer,
    file: FileRecord | FileListing,
    permissions = showsPermissions(viewer),
    signing = this.signing(tenant),
  ): Promise<FileJson> {
    if (!contentReadable(viewer, file)) return fileView(file, { permissions });
    const [contentUrl, thumbnailUrl] = await Promise.all([
      this.deps.store.presignGet(this.key(tenant, file.fileId), signing),
      file.thumbnail ? this.deps.store.presignGet(thumbnailKey(tenant.instance.address, file.fileId), signing) : undefined,
    ]);
    return fileView(file, { permissions, contentUrl, thumbnailUrl });
  }

  private presentAll(tenant: ResolvedInstance, viewer: Viewer, files: FileRecord[]): Promise<FileJson[]> {
    return Promise.all(files.map((file) => this.present(tenant, viewer, file)));
  }

  private key(tenant: ResolvedInstance, fileId: string): string {
    return objectKey(tenant.instance.address, fileId);
  }

  private signing(tenant: ResolvedInstance) {
    return { ttlSeconds: this.deps.signedUrlTtl, baseUrl: this.deps.baseUrl(tenant.instance.address) };
  }
}

/** A file a bulk call could not act on, with the refusal a single call would have answered. */
function failure(refusal: ApiError, fileId: string): BulkJson['failed'][number] {
  return { fileId, error: refusal.kind, message: refusal.message };
}
