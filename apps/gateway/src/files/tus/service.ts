// Resumable uploads (tus 1.0: core, creation, termination, expiration, checksum), a second way to do
// step 2 of the spec's upload: the file row, its grant, its quota and step 3 (`PUT …/complete`) stay as
// they are. An upload is created for a New file by whoever may upload its bytes (its signed upload
// address, or a token that sees the file), gets an address of its own whose random token is the
// capability for the rest, and takes its bytes over as many PATCH requests as it needs, each continuing
// where the stored offset says. One request writes an upload at a time (a lease in its row, renewed
// while it runs); an upload lives UPLOAD_DEADLINE past its last request, and its file with it.
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FileRecord, FileRepository, FileUploadRow, FileUploadRepository } from '@pds/db';
import { ApiError, UPLOAD_IDLE_MS } from '@pds/http';
import type { Logger } from '@pds/runtime';
import { objectKey, type BlobStore, type ResumableState } from '@pds/storage';
import type { Clock } from '@pds/tokens';
import type { Caller } from '../../context';
import type { ResolvedInstance } from '../../instances/registry';
import { requireActive } from '../../instances/state';
import { fileNotFound, requireVisible, viewerOf } from '../access';
import { pastLength, UploadBody } from './body';
import {
  byteCount,
  checksumMismatch,
  checksumOf,
  declaredLength,
  metadataOf,
  requirePatchType,
  requireVersion,
  RESUMABLE,
} from './protocol';

/** A request holds an upload this long without renewing; it renews every third of it while it runs. */
const LEASE_MS = 60_000;
/** A token is 32 random bytes in base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export interface ResumableDeps {
  files: FileRepository;
  uploads: FileUploadRepository;
  store: BlobStore;
  /** The instance as it is now (suspended or closed mid-request stops the upload). */
  instanceNow(address: string): Promise<ResolvedInstance | null>;
  clock: Clock;
  maxUploadBytes: number;
  /** Seconds an upload lives after its last request (UPLOAD_DEADLINE). */
  uploadDeadline: number;
  /** Where an upload's address points: the instance's public address and this path. */
  uploadUrl(address: string, token: string): string;
  logger: Logger;
}

export interface UploadProgress {
  offset: number;
  length: number;
  expires: Date;
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

export class ResumableUploads {
  constructor(private readonly deps: ResumableDeps) {}

  /** Creates an upload of a New file's bytes: its address, and when it expires unless resumed. */
  async create(tenant: ResolvedInstance, caller: Caller | undefined, req: IncomingMessage): Promise<{ location: string; expires: Date }> {
    requireVersion(req);
    if (req.headers['upload-defer-length'] !== undefined)
      throw ApiError.badRequest('Upload-Length is declared at creation (no deferred length)');
    const length = byteCount(req, 'Upload-Length');
    if (length > this.deps.maxUploadBytes) {
      throw new ApiError(413, 'Payload Too Large', `The upload is larger than the limit of ${this.deps.maxUploadBytes} bytes`, {
        headers: { ...RESUMABLE, 'Tus-Max-Size': String(this.deps.maxUploadBytes) },
      });
    }
    const metadata = metadataOf(req);
    const file = await this.grantedFile(tenant, caller, metadata);
    if (file.status !== 'New') throw ApiError.conflict(`File ${file.fileId} is ${file.status}: its bytes are not uploaded again`);
    const token = randomBytes(32).toString('base64url');
    const id = hashOf(token);
    const key = objectKey(tenant.instance.address, file.fileId);
    const now = this.deps.clock();
    const state = await this.deps.store.beginResumable(key, id, { length, contentType: metadata.filetype });
    try {
      const refusal = await this.deps.uploads.create(tenant.instance.id, {
        id,
        fileId: file.fileId,
        length,
        state,
        now,
        liveAfter: this.expiredBefore(now),
      });
      if (refusal === 'quota')
        throw ApiError.tooLarge(`File ${file.fileId} (${length} bytes) does not fit in this instance's storage quota`);
      if (refusal === 'file') throw ApiError.conflict(`File ${file.fileId} is no longer New`);
      // Nothing to send: the (empty) object is made at once, as a PATCH would make it with its last byte.
      if (length === 0) await this.deps.store.finishResumable(key, id, state);
    } catch (error) {
      await this.deps.uploads.remove(tenant.instance.id, id).catch(() => undefined);
      await this.deps.store.abortResumable(key, id, state).catch(() => undefined);
      throw error;
    }
    return { location: this.deps.uploadUrl(tenant.instance.address, token), expires: this.expiresAt(now) };
  }

  /** How far an upload got (HEAD). */
  async status(tenant: ResolvedInstance, token: string, req: IncomingMessage): Promise<UploadProgress> {
    requireVersion(req);
    const upload = await this.live(tenant, token);
    return { offset: upload.offset, length: upload.length, expires: this.expiresAt(upload.touchedAt) };
  }

  /**
   * Stores a PATCH's bytes after the upload's offset, and makes the object with its last byte. Without a
   * checksum every byte that arrives is kept (a cut request included); with one, the request's bytes are
   * kept only when they arrived whole and match it (460 otherwise).
   */
  async append(tenant: ResolvedInstance, token: string, req: IncomingMessage): Promise<UploadProgress> {
    requireVersion(req);
    requirePatchType(req);
    const offset = byteCount(req, 'Upload-Offset');
    const checksum = checksumOf(req);
    let upload = await this.live(tenant, token);
    const sent = declaredLength(req);
    if (sent !== undefined && sent > upload.length - offset) throw pastLength(upload.length - offset);
    const instanceId = tenant.instance.id;
    const lease = randomBytes(16).toString('hex');
    if (!(await this.deps.uploads.claim(instanceId, upload.id, lease, this.deps.clock(), this.leaseUntil()))) {
      throw new ApiError(423, 'Locked', 'Another request is writing this upload; try again shortly', {
        headers: { ...RESUMABLE, 'Retry-After': '2' },
      });
    }
    let lost = false;
    const keeper = setInterval(() => {
      void this.deps.uploads.renew(instanceId, upload.id, lease, this.deps.clock(), this.leaseUntil()).then(
        (held) => {
          if (held) return;
          lost = true;
          req.destroy();
        },
        (err: unknown) => this.deps.logger.warn({ err }, 'could not renew an upload lease'),
      );
    }, LEASE_MS / 3);
    try {
      // Read again under the lease: a request that held it before may have moved the offset.
      upload = (await this.deps.uploads.find(instanceId, upload.id)) ?? upload;
      if (offset !== upload.offset) throw offsetConflict(offset, upload.offset);
      const next = await this.write(tenant, upload, lease, req, checksum, () => lost);
      return { offset: next.offset, length: upload.length, expires: this.expiresAt(this.deps.clock()) };
    } finally {
      clearInterval(keeper);
      await this.deps.uploads.release(instanceId, upload.id, lease).catch(() => undefined);
    }
  }

  /** Ends an upload (DELETE): what the store holds of it is dropped; its file stays New. */
  async terminate(tenant: ResolvedInstance, token: string, req: IncomingMessage): Promise<void> {
    requireVersion(req);
    const upload = await this.found(tenant, token);
    const lease = randomBytes(16).toString('hex');
    if (!(await this.deps.uploads.claim(tenant.instance.id, upload.id, lease, this.deps.clock(), this.leaseUntil()))) {
      throw new ApiError(423, 'Locked', 'A request is writing this upload; try again once it ends', { headers: RESUMABLE });
    }
    await this.deps.store.abortResumable(this.key(tenant, upload), upload.id, upload.state as ResumableState);
    await this.deps.uploads.remove(tenant.instance.id, upload.id);
  }

  /**
   * Ends the uploads of a file that was deleted: what the store holds of each is dropped now, except for
   * one a request is writing (that request stops at its next check; the sweep ends it after).
   */
  async endAll(tenant: ResolvedInstance, fileId: string): Promise<void> {
    const now = this.deps.clock();
    for (const upload of await this.deps.uploads.ofFile(tenant.instance.id, fileId)) {
      await this.deps.uploads.removeEnded(tenant.instance.id, upload.id, this.expiredBefore(now), now, () =>
        this.deps.store.abortResumable(this.key(tenant, upload), upload.id, upload.state as ResumableState),
      );
    }
  }

  /** The request's bytes into the store, then the state that holds them recorded under the lease. */
  private async write(
    tenant: ResolvedInstance,
    upload: FileUploadRow,
    lease: string,
    req: IncomingMessage,
    checksum: Buffer | undefined,
    leaseLost: () => boolean,
  ): Promise<ResumableState> {
    const { store, uploads } = this.deps;
    const key = this.key(tenant, upload);
    const instanceId = tenant.instance.id;
    let committed = upload.state as ResumableState;
    const record = async (state: ResumableState) => {
      if (!(await uploads.progress(instanceId, upload.id, lease, state.offset, state, this.deps.clock(), this.leaseUntil()))) {
        throw ApiError.conflict('This upload was taken over by another request');
      }
    };
    const hash = checksum ? createHash('sha256') : undefined;
    const body = new UploadBody(req, {
      limit: upload.length - upload.offset,
      // Shorter than the lease: a cut request's end is recorded in time.
      idleMs: UPLOAD_IDLE_MS,
      hash,
      check: async () => {
        if (leaseLost()) throw ApiError.conflict('This upload was taken over by another request');
        await this.requireOpen(tenant, upload.fileId);
      },
    });
    // Bytes are recorded as the store makes them durable, unless a checksum must see them all first.
    const durable = checksum
      ? undefined
      : async (state: ResumableState) => {
          await record(state);
          committed = state;
        };
    const next = await store.appendResumable(key, upload.id, committed, body, { durable });
    if (hash && (body.cut || !hash.digest().equals(checksum as Buffer))) {
      await store.releaseResumable(key, upload.id, next, committed);
      // A cut request is answered to nobody; a whole one learns why nothing was kept.
      if (body.cut) return committed;
      throw checksumMismatch();
    }
    try {
      // With its last byte the object is made before the offset says so: an offset equal to the length means a whole object.
      if (next.offset === next.length) await store.finishResumable(key, upload.id, next);
      await record(next);
    } catch (error) {
      await store.releaseResumable(key, upload.id, next, committed).catch(() => undefined);
      throw error;
    }
    await store.releaseResumable(key, upload.id, committed, next);
    return next;
  }

  /** An upload that may still take bytes: recorded, not expired, its file still New. */
  private async live(tenant: ResolvedInstance, token: string): Promise<FileUploadRow> {
    const upload = await this.found(tenant, token);
    if (upload.touchedAt <= this.expiredBefore(this.deps.clock())) throw uploadGone('expired');
    await this.requireOpen(tenant, upload.fileId);
    return upload;
  }

  private async found(tenant: ResolvedInstance, token: string): Promise<FileUploadRow> {
    const upload = TOKEN.test(token) ? await this.deps.uploads.find(tenant.instance.id, hashOf(token)) : null;
    if (!upload) throw new ApiError(404, 'Not Found', 'There is no upload at this address', { headers: RESUMABLE });
    return upload;
  }

  /** Throws when the upload's file or instance stopped taking bytes (deleted, completed; suspended, closing). */
  private async requireOpen(tenant: ResolvedInstance, fileId: string): Promise<void> {
    const [instance, file] = await Promise.all([
      this.deps.instanceNow(tenant.instance.address),
      this.deps.files.find(tenant.instance.id, fileId),
    ]);
    if (!instance) throw uploadGone('deleted');
    requireActive(instance);
    if (!file || file.status === 'Deleted') throw uploadGone('deleted');
    if (file.status !== 'New') throw uploadGone('completed');
  }

  /** The file a creation may upload into: the one its signed upload address names, or one its token's account sees. */
  private async grantedFile(tenant: ResolvedInstance, caller: Caller | undefined, metadata: Record<string, string>): Promise<FileRecord> {
    const address = tenant.instance.address;
    if (metadata.contentUrl !== undefined) {
      const key = this.deps.store.uploadKey(metadata.contentUrl);
      const fileId = key?.startsWith(`${address}/`) ? key.slice(address.length + 1) : undefined;
      const file = fileId && !fileId.includes('/') ? await this.deps.files.find(tenant.instance.id, fileId) : null;
      if (!file || file.status === 'Deleted') throw ApiError.forbidden('The signed address is invalid or has expired');
      return file;
    }
    if (!caller)
      throw ApiError.notAuthenticated('Send X-Auth-Token, or the file\'s signed upload address as "contentUrl" in Upload-Metadata');
    const fileId = metadata.fileId;
    if (!fileId)
      throw ApiError.badRequest('Upload-Metadata names the file: "fileId" (with a token) or "contentUrl" (its signed upload address)');
    const file = requireVisible(viewerOf(caller), await this.deps.files.find(tenant.instance.id, fileId), fileId);
    if (file.status === 'Deleted') throw fileNotFound(fileId);
    return file;
  }

  private key(tenant: ResolvedInstance, upload: Pick<FileUploadRow, 'fileId'>): string {
    return objectKey(tenant.instance.address, upload.fileId);
  }

  /** Uploads last touched at or before this have expired. */
  private expiredBefore(now: Date): Date {
    return new Date(now.getTime() - this.deps.uploadDeadline * 1000);
  }

  private expiresAt(touchedAt: Date): Date {
    return new Date(touchedAt.getTime() + this.deps.uploadDeadline * 1000);
  }

  private leaseUntil(): Date {
    return new Date(this.deps.clock().getTime() + LEASE_MS);
  }
}

function offsetConflict(sent: number, held: number): ApiError {
  return new ApiError(409, 'Conflict', `Upload-Offset is ${sent}, but the upload holds ${held} bytes: continue from ${held}`, {
    headers: RESUMABLE,
  });
}

function uploadGone(why: 'expired' | 'deleted' | 'completed'): ApiError {
  const message = {
    expired: 'This upload expired: nothing was sent to it for longer than UPLOAD_DEADLINE',
    deleted: 'The file of this upload was deleted',
    completed: 'The file of this upload is completed already',
  }[why];
  return new ApiError(410, 'Gone', message, { headers: RESUMABLE });
}
