// The rules of the Files API (CONTRACT §2): states, ids, signed addresses. Who may do what is asked
// of access.ts; every query goes through the tenant-scoped FileRepository.
import { z } from 'zod';
import type { FileListing, FileMetadata, FileRecord, FileRepository, FileTemplate, Page, UserRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { objectKey, type BlobStore } from '@pds/storage';
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
import { fileIdStem } from './slug';
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
  store: BlobStore;
  clock: Clock;
  signedUrlTtl: number;
  /** MAX_UPLOAD_BYTES. The local store refuses more while receiving; S3 (presigned PUT) only here. */
  maxUploadBytes: number;
  /** Public base URL of an instance address: where local-store addresses are served. */
  baseUrl: (address: string) => string;
}

type FileInput = { fileId: string };
type GrantInput = { fileId: string; userId: string };

/** Every method takes the instance, the caller (undefined: no token) and its input, as every service does. */
export class FileService {
  constructor(private readonly deps: FileServiceDeps) {}

  /** Writes the New file with the uploader's permission and returns it with a signed PUT address. */
  async upload(tenant: ResolvedInstance, caller: Caller, input: NewFileInput): Promise<FileJson> {
    const viewer = viewerOf(caller) as Extract<Viewer, { userId: string }>;
    const now = this.deps.clock();
    const file = await this.deps.files.create(tenant.instance.id, fileIdStem(input.source, input.name), {
      name: input.name,
      source: input.source,
      tags: input.tags ?? [],
      title: input.title,
      description: input.description,
      uploaderId: viewer.userId,
      dateCreated: input.dateCreated ?? now,
      now,
    });
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
    const completed = await this.deps.files.complete(tenant.instance.id, fileId, size, this.deps.clock());
    // A delete that won the race leaves nothing to complete.
    if (!completed) throw ApiError.conflict(`File ${fileId} has been deleted`);
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

  /** Removes the bytes first, then marks the file Deleted: a failure leaves a file that can be deleted again. */
  async delete(tenant: ResolvedInstance, caller: Caller, { fileId }: FileInput): Promise<FileJson> {
    const viewer = viewerOf(caller);
    requireManageable(viewer, await this.find(tenant, fileId), fileId);
    await this.deps.store.remove(this.key(tenant, fileId));
    const deleted = await this.deps.files.markDeleted(tenant.instance.id, fileId, this.deps.clock());
    if (!deleted) throw fileNotFound(fileId);
    return this.present(tenant, viewer, deleted);
  }

  async updateMetadata(
    tenant: ResolvedInstance,
    caller: Caller,
    { fileId, metadata }: FileInput & { metadata: FileMetadata },
  ): Promise<FileJson> {
    const viewer = viewerOf(caller);
    requireEditable(viewer, await this.find(tenant, fileId), fileId);
    const updated = await this.deps.files.updateMetadata(tenant.instance.id, fileId, metadata, this.deps.clock());
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
    const updated = await this.deps.files.setPublic(tenant.instance.id, fileId, contentPublic, this.deps.clock());
    if (!updated) throw fileNotFound(fileId);
    return this.present(tenant, viewer, updated);
  }

  async grant(tenant: ResolvedInstance, caller: Caller, { fileId, userId, content }: GrantInput & { content: boolean }): Promise<FileJson> {
    const viewer = viewerOf(caller);
    requireManageable(viewer, await this.find(tenant, fileId), fileId);
    await this.requireUser(tenant, userId);
    const updated = await this.deps.files.grant(tenant.instance.id, fileId, userId, content);
    if (!updated) throw fileNotFound(fileId);
    return this.present(tenant, viewer, updated);
  }

  async revoke(tenant: ResolvedInstance, caller: Caller, { fileId, userId }: GrantInput): Promise<FileJson> {
    const viewer = viewerOf(caller);
    requireManageable(viewer, await this.find(tenant, fileId), fileId);
    await this.requireUser(tenant, userId);
    const updated = await this.deps.files.revoke(tenant.instance.id, fileId, userId);
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
    return this.presentAll(tenant, viewer, await this.deps.files.grantMatching(tenant.instance.id, template, userId, content));
  }

  async revokeMatching(
    tenant: ResolvedInstance,
    caller: Caller,
    { template, userId }: { template: FileTemplate; userId: string },
  ): Promise<FileJson[]> {
    const viewer = viewerOf(caller);
    requireOwner(viewer);
    await this.requireUser(tenant, userId);
    return this.presentAll(tenant, viewer, await this.deps.files.revokeMatching(tenant.instance.id, template, userId));
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
    const contentUrl = contentReadable(viewer, file) ? await this.deps.store.presignGet(this.key(tenant, file.fileId), signing) : undefined;
    return fileView(file, { permissions, contentUrl });
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
