// What the holder of a share link may do, without an account: see the files it names, give its password,
// preview and download them. Every use reads the link again (nothing is cached), so a revocation, an
// expiry, a used-up limit or a file sent to the trash holds from the next request on, on every gateway.
// The content goes out through short signed addresses, as everywhere else; a selection's zip streams
// through the gateway as the console's zip downloads do (files/archive.ts).
import type { Readable } from 'node:stream';
import type { Actor, LinkInUse, SharedFile, ShareLinkRepository } from '@pds/db';
import { ApiError, type AccountLimit, type RateLimit, limitedAddress } from '@pds/http';
import { objectKey, type BlobStore, type ResponseOverrides } from '@pds/storage';
import { type Clock, DECOY_HASH, verifyPassword } from '@pds/tokens';
import type { ReadLog } from '../events/reads';
import type { ArchiveService } from '../files/archive';
import type { ResolvedInstance } from '../instances/registry';
import { disposition, mediaTypeOf, previewOf } from './media';
import { hashLinkToken, isLinkToken, type UnlockProofs } from './secrets';
import { linkState } from './service';

export interface LinkVisitsDeps {
  links: ShareLinkRepository;
  store: BlobStore;
  archives: ArchiveService;
  reads: ReadLog;
  proofs: UnlockProofs;
  /** Password attempts, per client and instance, and per link from any client (against guessing from many addresses). */
  /** `client`: every try of an address; `link`: the wrong tries on a link, from every address together. */
  passwordLimits: { client: RateLimit; link: AccountLimit };
  clock: Clock;
  signedUrlTtl: number;
  baseUrl: (address: string) => string;
}

/** A link its visitor may use now: its files (those still served, in the owner's order) and its rules. */
export interface OpenLink {
  id: string;
  files: SharedFile[];
  allowDownload: boolean;
  expiresAt: Date | null;
  /** null: no limit. */
  downloadsLeft: number | null;
}

/** Who uses a link: someone without an account, from this address. */
export interface Visitor {
  ip: string;
  /** The unlock proof of the link's cookie, if the visitor has one. */
  proof?: string;
}

/** A download: a signed address of one file, or a selection's zip as it is made. */
export type Download = { url: string } | { zip: { name: string; stream: Readable } };

/** How long a password, once given, unlocks its link in that browser (never past the link's expiry). */
export const UNLOCK_SECONDS = 12 * 3600;

const NO_LINK = 'There is no link at this address. Check that you have all of it.';
const WRONG_PASSWORD = 'That password is not right.';

export class LinkVisits {
  constructor(private readonly deps: LinkVisitsDeps) {}

  /** The link as its visitor may use it now, or why not (see `refusal`). */
  async open(tenant: ResolvedInstance, token: string, visitor: Visitor): Promise<OpenLink> {
    const now = this.deps.clock();
    const link = await this.find(tenant, token);
    if (!link) throw ApiError.notFound(NO_LINK);
    const refused = refusal(link, now);
    if (refused) throw refused;
    if (link.passwordHash && !this.deps.proofs.holds(visitor.proof, tenant.instance.id, link.id, now.getTime())) {
      throw ApiError.notAuthenticated('This link needs a password.');
    }
    if (link.files.length === 0) {
      throw ApiError.notFound('What this link shared is no longer shared: the person who shared it has deleted it.');
    }
    return {
      id: link.id,
      files: link.files,
      allowDownload: link.allowDownload,
      expiresAt: link.expiresAt,
      downloadsLeft: link.downloadLimit === null ? null : link.downloadLimit - link.downloads,
    };
  }

  /** The link's page is shown: counted, and noted in the owner's activity log. */
  async view(tenant: ResolvedInstance, token: string, visitor: Visitor): Promise<OpenLink> {
    const link = await this.open(tenant, token, visitor);
    await this.deps.links.countView(tenant.instance.id, link.id, this.deps.clock());
    this.note(tenant, visitor, link, link.files, 'viewed');
    return link;
  }

  /**
   * Checks a link's password; answers the proof to keep (and until when). Counted against the limits
   * before anything is read, and the same refusal whether the link is missing, has no password or has
   * another one, in the same time (a missing link's attempt checks a decoy hash): the answer never tells
   * whether a link exists.
   */
  async unlock(
    tenant: ResolvedInstance,
    token: string,
    password: string,
    visitor: Visitor,
  ): Promise<{ proof: string; maxAgeSeconds: number }> {
    const tokenHash = hashLinkToken(token);
    const address = limitedAddress(visitor.ip);
    const guarded = `${tenant.instance.id}:${tokenHash}`;
    await this.deps.passwordLimits.client.consume(`${tenant.instance.id}:${address}`);
    // A link guessed at from many addresses refuses those that guessed wrong, never a visitor who did not.
    await this.deps.passwordLimits.link.check(guarded, address);
    const link = isLinkToken(token) ? await this.deps.links.inUse(tenant.instance.id, tokenHash) : null;
    const right = await verifyPassword(password, link?.passwordHash ?? DECOY_HASH);
    if (!link?.passwordHash || !right) {
      await this.deps.passwordLimits.link.fail(guarded, address);
      throw ApiError.notAuthenticated(WRONG_PASSWORD);
    }
    await this.deps.passwordLimits.link.succeed(guarded, address);
    const nowMs = this.deps.clock().getTime();
    const expiresAtMs = Math.min(nowMs + UNLOCK_SECONDS * 1000, link.expiresAt?.getTime() ?? Infinity);
    return {
      proof: this.deps.proofs.issue(tenant.instance.id, link.id, expiresAtMs),
      maxAgeSeconds: Math.max(1, Math.floor((expiresAtMs - nowMs) / 1000)),
    };
  }

  /**
   * One download: the file `fileId` names (one of the link's), or without it everything the link
   * shares (its one file, or the zip of all). Counted first, in one conditional statement, so a limit
   * of N gives exactly N downloads however many ask at once; `count: false` (a HEAD) checks only.
   */
  async download(
    tenant: ResolvedInstance,
    token: string,
    visitor: Visitor,
    fileId: string | undefined,
    { count = true } = {},
  ): Promise<Download | undefined> {
    const link = await this.open(tenant, token, visitor);
    if (!link.allowDownload) throw ApiError.forbidden('This link lets you view what it shares, not download it.');
    const files = fileId === undefined ? link.files : [fileOf(link, fileId)];
    if (!count) return undefined;
    if (!(await this.deps.links.countDownload(tenant.instance.id, link.id, this.deps.clock()))) {
      // Used up (or ended) by another download since it was read: its refusal, as a new look says it.
      throw (await this.refusalNow(tenant, token)) ?? usedUp();
    }
    this.note(tenant, visitor, link, files, 'downloaded');
    if (files.length > 1) return { zip: { name: this.deps.archives.name(), stream: this.deps.archives.zip(tenant, files) } };
    const file = files[0] as SharedFile;
    return {
      url: await this.signed(tenant, file, { contentType: mediaTypeOf(file.name), disposition: disposition('attachment', file.name) }),
    };
  }

  /** A signed address showing one of the link's files inline, when it is of a kind shown so; 404 otherwise. */
  async preview(tenant: ResolvedInstance, token: string, visitor: Visitor, fileId: string): Promise<string> {
    const file = fileOf(await this.open(tenant, token, visitor), fileId);
    const preview = previewOf(file.name);
    if (!preview) throw ApiError.notFound(`${file.name} has no preview`);
    return this.signed(tenant, file, { contentType: preview.type, disposition: disposition('inline', file.name) });
  }

  private signed(tenant: ResolvedInstance, file: SharedFile, response: ResponseOverrides): Promise<string> {
    return this.deps.store.presignGet(objectKey(tenant.instance.address, file.fileId), {
      ttlSeconds: this.deps.signedUrlTtl,
      baseUrl: this.deps.baseUrl(tenant.instance.address),
      response,
    });
  }

  private find(tenant: ResolvedInstance, token: string): Promise<LinkInUse | null> {
    return isLinkToken(token) ? this.deps.links.inUse(tenant.instance.id, hashLinkToken(token)) : Promise.resolve(null);
  }

  private async refusalNow(tenant: ResolvedInstance, token: string): Promise<ApiError | undefined> {
    const link = await this.find(tenant, token);
    return link ? refusal(link, this.deps.clock()) : ApiError.notFound(NO_LINK);
  }

  /** "Someone with your link to tax.pdf downloaded it": a read in the owner's activity log, batched (events/reads.ts). */
  private note(tenant: ResolvedInstance, visitor: Visitor, link: OpenLink, files: SharedFile[], action: 'viewed' | 'downloaded'): void {
    const first = files[0] as SharedFile;
    const actor: Actor = { kind: 'anonymous', address: visitor.ip };
    this.deps.reads.note(tenant.instance.id, actor, {
      type: 'link.used',
      object: { linkId: link.id, action, fileId: first.fileId, name: first.name, files: files.length },
    });
  }
}

/** Why a link gives nothing at `now`, said plainly; undefined while it is active. */
function refusal(link: LinkInUse, now: Date): ApiError | undefined {
  switch (linkState(link, now)) {
    case 'revoked':
      return ApiError.notFound('This link was turned off by the person who shared it.');
    case 'expired':
      return ApiError.gone(`This link expired on ${(link.expiresAt as Date).toISOString().slice(0, 16).replace('T', ' at ')} UTC.`);
    case 'used-up':
      return usedUp();
    case 'active':
      return undefined;
  }
}

function usedUp(): ApiError {
  return ApiError.gone('This link has been used as many times as the person who shared it allowed.');
}

/** One of the link's files; the same 404 for any other id, so a link tells nothing of files it does not name. */
function fileOf(link: OpenLink, fileId: string): SharedFile {
  const file = link.files.find((f) => f.fileId === fileId);
  if (!file) throw ApiError.notFound('This link shares no such file.');
  return file;
}
