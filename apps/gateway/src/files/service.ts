// The rules of the Files API (CONTRACT §2): states, ids, signed addresses. Who may do what is asked
// of access.ts; every query goes through the tenant-scoped FileRepository.
import { z } from 'zod';
import type { FileListing, FileMetadata, FileRecord, FileRepository, FileTemplate, Page, UserRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { objectKey, type BlobStore } from '@pds/storage';
import type { Clock } from '@pds/tokens';
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
  type Viewer,
} from './access';
import { fileIdStem } from './slug';
import { fileJson, listingJson, type FileJson } from './view';

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

export class FileService {
  constructor(private readonly deps: FileServiceDeps) {}

  /** Writes the New file with the uploader's permission and returns it with a signed PUT address. */
  async upload(tenant: ResolvedInstance, viewer: Viewer, input: NewFileInput): Promise<FileJson> {
    if (viewer.kind === 'anonymous') throw ApiError.notAuthenticated();
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
    return fileJson(file, { permissions: true, contentUrl });
  }

  /** New → Completed once the bytes are there; completing again re-reads the size. */
  async complete(tenant: ResolvedInstance, viewer: Viewer, fileId: string): Promise<FileJson> {
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

  async get(tenant: ResolvedInstance, viewer: Viewer, fileId: string): Promise<FileJson> {
    const file = requireVisible(viewer, await this.deps.files.findListing(tenant.instance.id, fileId), fileId);
    return this.presentListing(tenant, viewer, file, showsPermissions(viewer), this.signing(tenant));
  }

  /** The signed GET address of a file's content; the same 404 for missing and forbidden. */
  async contentAddress(tenant: ResolvedInstance, viewer: Viewer, fileId: string): Promise<string> {
    const file = requireContent(viewer, await this.deps.files.findListing(tenant.instance.id, fileId), fileId);
    return this.deps.store.presignGet(this.key(tenant, file.fileId), this.signing(tenant));
  }

  /** Removes the bytes first, then marks the file Deleted: a failure leaves a file that can be deleted again. */
  async delete(tenant: ResolvedInstance, viewer: Viewer, fileId: string): Promise<FileJson> {
    requireManageable(viewer, await this.find(tenant, fileId), fileId);
    await this.deps.store.remove(this.key(tenant, fileId));
    const deleted = await this.deps.files.markDeleted(tenant.instance.id, fileId, this.deps.clock());
    if (!deleted) throw fileNotFound(fileId);
    return this.present(tenant, viewer, deleted);
  }

  async updateMetadata(tenant: ResolvedInstance, viewer: Viewer, fileId: string, metadata: FileMetadata): Promise<FileJson> {
    requireEditable(viewer, await this.find(tenant, fileId), fileId);
    const updated = await this.deps.files.updateMetadata(tenant.instance.id, fileId, metadata, this.deps.clock());
    if (!updated) throw fileNotFound(fileId);
    return this.present(tenant, viewer, updated);
  }

  async setPublic(tenant: ResolvedInstance, viewer: Viewer, fileId: string, contentPublic: boolean): Promise<FileJson> {
    requireManageable(viewer, await this.find(tenant, fileId), fileId);
    const updated = await this.deps.files.setPublic(tenant.instance.id, fileId, contentPublic, this.deps.clock());
    if (!updated) throw fileNotFound(fileId);
    return this.present(tenant, viewer, updated);
  }

  async grant(tenant: ResolvedInstance, viewer: Viewer, fileId: string, userId: string, content: boolean): Promise<FileJson> {
    requireManageable(viewer, await this.find(tenant, fileId), fileId);
    await this.requireUser(tenant, userId);
    const updated = await this.deps.files.grant(tenant.instance.id, fileId, userId, content);
    if (!updated) throw fileNotFound(fileId);
    return this.present(tenant, viewer, updated);
  }

  async revoke(tenant: ResolvedInstance, viewer: Viewer, fileId: string, userId: string): Promise<FileJson> {
    requireManageable(viewer, await this.find(tenant, fileId), fileId);
    await this.requireUser(tenant, userId);
    const updated = await this.deps.files.revoke(tenant.instance.id, fileId, userId);
    if (!updated) throw fileNotFound(fileId);
    return this.present(tenant, viewer, updated);
  }

  async grantMatching(
    tenant: ResolvedInstance,
    viewer: Viewer,
    template: FileTemplate,
    userId: string,
    content: boolean,
  ): Promise<FileJson[]> {
    requireOwner(viewer);
    await this.requireUser(tenant, userId);
    return this.presentAll(tenant, viewer, await this.deps.files.grantMatching(tenant.instance.id, template, userId, content));
  }

  async revokeMatching(tenant: ResolvedInstance, viewer: Viewer, template: FileTemplate, userId: string): Promise<FileJson[]> {
    requireOwner(viewer);
    await this.requireUser(tenant, userId);
    return this.presentAll(tenant, viewer, await this.deps.files.revokeMatching(tenant.instance.id, template, userId));
  }

  /** As `present` renders each file, with what is the same for every hit worked out once per page. */
  async search(tenant: ResolvedInstance, viewer: Viewer, template: FileTemplate, page: Page): Promise<FileJson[]> {
    const files = await this.deps.files.search(tenant.instance.id, template, searchScope(viewer), page);
    const permissions = showsPermissions(viewer);
    const signing = this.signing(tenant);
    return Promise.all(files.map((file) => this.presentListing(tenant, viewer, file, permissions, signing)));
  }

  private find(tenant: ResolvedInstance, fileId: string): Promise<FileRecord | null> {
    return this.deps.files.find(tenant.instance.id, fileId);
  }

  private async requireUser(tenant: ResolvedInstance, userId: string): Promise<void> {
    const user = z.uuid().safeParse(userId).success ? await this.deps.users.findById(tenant.instance.id, userId) : null;
    if (!user) throw ApiError.notFound(`User ${userId} not found`);
  }

  /** The record as this caller may see it: a fresh content address only with content rights. */
  private async present(tenant: ResolvedInstance, viewer: Viewer, file: FileRecord): Promise<FileJson> {
    const contentUrl = contentReadable(viewer, file)
      ? await this.deps.store.presignGet(this.key(tenant, file.fileId), this.signing(tenant))
      : undefined;
    return fileJson(file, { permissions: showsPermissions(viewer), contentUrl });
  }

  /** As `present`, for a file read as a listing; `permissions` and `signing` are worked out once per page. */
  private async presentListing(
    tenant: ResolvedInstance,
    viewer: Viewer,
    file: FileListing,
    permissions: boolean,
    signing: ReturnType<FileService['signing']>,
  ): Promise<FileJson> {
    const contentUrl = contentReadable(viewer, file) ? await this.deps.store.presignGet(this.key(tenant, file.fileId), signing) : undefined;
    return listingJson(file, { permissions, contentUrl });
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
