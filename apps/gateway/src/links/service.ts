// The owner's share links (issue 33): make one for a file or a selection, list them with their use,
// revoke one. A link's address holds its token, which is shown once, when the link is made: the
// database keeps only its SHA-256. What a visitor may do with a link is visits.ts.
import { randomUUID } from 'node:crypto';
import type { FileRepository, FileTemplate, ShareLinkRecord, ShareLinkRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { type Clock, hashPassword } from '@pds/tokens';
import { requireOwner, type Caller } from '../context';
import { fileNotFound } from '../files/access';
import { MAX_SELECTION } from '../files/input';
import type { ResolvedInstance } from '../instances/registry';
import type { LinksQuery, NewLinkInput } from './input';
import { hashLinkToken, newLinkToken } from './secrets';

export const LINK_PATH = '/s';

/** active, or why the link no longer gives anything. */
export type LinkState = 'active' | 'expired' | 'used-up' | 'revoked';

export interface LinkJson {
  id: string;
  /** The link's address, with its token: answered once, when the link is made. */
  url?: string;
  fileIds: string[];
  state: LinkState;
  hasPassword: boolean;
  expiresAt?: string;
  downloadLimit?: number;
  downloads: number;
  views: number;
  lastUsedAt?: string;
  allowDownload: boolean;
  createdAt: string;
  revokedAt?: string;
}

export interface ShareLinkServiceDeps {
  links: ShareLinkRepository;
  files: FileRepository;
  clock: Clock;
  /** Public base URL of an instance address. */
  baseUrl: (address: string) => string;
}

/** A link's state at `now`, from its row: revoked, expired and used up in that order. */
export function linkState(link: Pick<ShareLinkRecord, 'revokedAt' | 'expiresAt' | 'downloadLimit' | 'downloads'>, now: Date): LinkState {
  if (link.revokedAt) return 'revoked';
  if (link.expiresAt && link.expiresAt <= now) return 'expired';
  if (link.downloadLimit !== null && link.downloads >= link.downloadLimit) return 'used-up';
  return 'active';
}

export class ShareLinkService {
  constructor(private readonly deps: ShareLinkServiceDeps) {}

  /**
   * A link to Completed files, named by id (each must be one) or by a template (the Completed files it
   * matches). Answers the link with its address, the only time the address is told.
   */
  async create(tenant: ResolvedInstance, caller: Caller, input: NewLinkInput): Promise<LinkJson> {
    requireOwner(caller);
    const now = this.deps.clock();
    if (input.expiresAt && input.expiresAt <= now) throw ApiError.badRequest('expiresAt: must be in the future');
    const fileIds = input.fileIds ? await this.requireCompleted(tenant, input.fileIds) : await this.matching(tenant, input.template ?? {});
    const token = newLinkToken();
    const link = await this.deps.links.create(
      tenant.instance.id,
      {
        id: randomUUID(),
        tokenHash: hashLinkToken(token),
        passwordHash: input.password ? await hashPassword(input.password) : null,
        expiresAt: input.expiresAt ?? null,
        downloadLimit: input.downloadLimit ?? null,
        allowDownload: input.allowDownload,
        createdAt: now,
      },
      fileIds,
      caller.actor,
    );
    // Every file went to the trash between the check and the link.
    if (!link) throw fileNotFound(fileIds[0] as string);
    return { ...linkView(link, now), url: `${this.deps.baseUrl(tenant.instance.address)}${LINK_PATH}/${token}` };
  }

  /** The instance's links, newest first, with their use; a file's only with `fileId`. */
  async list(tenant: ResolvedInstance, caller: Caller, query: LinksQuery): Promise<LinkJson[]> {
    requireOwner(caller);
    const now = this.deps.clock();
    const links = await this.deps.links.list(tenant.instance.id, query.fileId, query);
    return links.map((link) => linkView(link, now));
  }

  /** Turns the link off at once: its next use, on any gateway, is refused. Revoking again changes nothing. */
  async revoke(tenant: ResolvedInstance, caller: Caller, id: string): Promise<LinkJson> {
    requireOwner(caller);
    const now = this.deps.clock();
    const link = await this.deps.links.revoke(tenant.instance.id, id, now, caller.actor);
    if (!link) throw ApiError.notFound(`Link ${id} not found`);
    return linkView(link, now);
  }

  /** The ids, when each is a Completed file: 404 for a missing or deleted one, 409 for one not uploaded yet. */
  private async requireCompleted(tenant: ResolvedInstance, fileIds: string[]): Promise<string[]> {
    const found = new Map((await this.deps.files.findAll(tenant.instance.id, fileIds)).map((file) => [file.fileId, file]));
    for (const fileId of fileIds) {
      const file = found.get(fileId);
      if (!file || file.status === 'Deleted') throw fileNotFound(fileId);
      if (file.status !== 'Completed') throw ApiError.conflict(`File ${fileId} has not been uploaded`);
    }
    return fileIds;
  }

  /** The Completed files a template matches, newest first: at least one, at most MAX_SELECTION. */
  private async matching(tenant: ResolvedInstance, template: FileTemplate): Promise<string[]> {
    const files = await this.deps.files.search(
      tenant.instance.id,
      { ...template, status: 'Completed' },
      { all: true },
      { take: MAX_SELECTION + 1, skip: 0 },
    );
    if (files.length === 0) throw ApiError.notFound('No completed file matches the template');
    if (files.length > MAX_SELECTION)
      throw ApiError.badRequest(`template: matches more than ${MAX_SELECTION} files; a link names at most that many`);
    return files.map((file) => file.fileId);
  }
}

/** A link as its owner sees it: optional fields without a value are left out. */
function linkView(link: ShareLinkRecord, now: Date): LinkJson {
  const json: LinkJson = {
    id: link.id,
    fileIds: link.fileIds,
    state: linkState(link, now),
    hasPassword: link.hasPassword,
    downloads: link.downloads,
    views: link.views,
    allowDownload: link.allowDownload,
    createdAt: link.createdAt.toISOString(),
  };
  if (link.expiresAt) json.expiresAt = link.expiresAt.toISOString();
  if (link.downloadLimit !== null) json.downloadLimit = link.downloadLimit;
  if (link.lastUsedAt) json.lastUsedAt = link.lastUsedAt.toISOString();
  if (link.revokedAt) json.revokedAt = link.revokedAt.toISOString();
  return json;
}
