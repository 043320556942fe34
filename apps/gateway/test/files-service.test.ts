// FileService called directly, on real PostgreSQL and the local store: (tenant, caller, input) as the
// routes call it, with the tenant and callers of real sign-ups. Only the bytes travel as a client sends
// them, to the signed address. What the service answers is checked against what the repository then holds.
import { instanceUrl } from '@pds/config';
import { FileRepository, UserRepository, type FileTemplate } from '@pds/db';
import { objectKey } from '@pds/storage';
import { useGateway } from '../../../test/support/use-gateway';
import type { Caller } from '../src/context';
import { createLogger } from '@pds/runtime';
import { FileService } from '../src/files/service';
import type { ResolvedInstance } from '../src/instances/registry';
import { callerWith, tenantAt } from './callers';
import { putBytes } from './files-support';

const { gw, owners, users } = useGateway({ owners: ['alice', 'zed'], users: { bob: 'alice', carol: 'alice' } });
let files: FileService;
let here: ResolvedInstance;
let there: ResolvedInstance;
const as = {} as Record<'alice' | 'bob' | 'carol' | 'zed', Caller>;

beforeAll(async () => {
  files = new FileService({
    files: new FileRepository(gw.db),
    users: new UserRepository(gw.db),
    store: gw.blobStore,
    clock: gw.clock,
    signedUrlTtl: gw.config.SIGNED_URL_TTL,
    maxUploadBytes: gw.config.MAX_UPLOAD_BYTES,
    baseUrl: (address) => instanceUrl(gw.config, address),
    logger: createLogger({ level: 'silent' }),
  });
  here = await tenantAt(gw, owners.alice.address);
  there = await tenantAt(gw, owners.zed.address);
  as.alice = await callerWith(gw, here, owners.alice);
  as.bob = await callerWith(gw, here, users.bob);
  as.carol = await callerWith(gw, here, users.carol);
  as.zed = await callerWith(gw, there, owners.zed);
});

const stored = (fileId: string, tenant = here) => new FileRepository(gw.db).find(tenant.instance.id, fileId);

/** Bob's upload with its bytes sent to the signed address, completed: the fileId. */
async function completedByBob(name: string): Promise<string> {
  const started = await files.upload(here, as.bob, { name, source: 'svc' });
  expect(await putBytes(gw, started.contentUrl as string, Buffer.from('hello'))).toBe(200);
  return (await files.complete(here, as.bob, { fileId: started.fileId })).fileId;
}

/** The status a call was refused with, and its message. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await call;
  } catch (error) {
    const { status, message } = error as { status?: number; message: string };
    if (status !== undefined) return { status, message };
    throw error;
  }
  throw new Error('the call succeeded');
}

describe('upload and completion', () => {
  it('writes a New file under an id from source and name, with the uploader’s permission and a signed PUT address', async () => {
    const started = await files.upload(here, as.bob, { name: 'Notes.TXT', source: 'svc', tags: ['a'] });
    expect(started).toEqual(
      expect.objectContaining({
        fileId: 'svcnotes.txt',
        status: { status: 'New' },
        permissions: [{ userId: users.bob.userId, contentReadable: true }],
        contentUrl: expect.stringContaining(`/blobs/`),
      }),
    );
    expect(await stored('svcnotes.txt')).toMatchObject({ status: 'New', uploaderId: users.bob.userId, tags: ['a'], size: null });
    const again = await files.upload(here, as.bob, { name: 'Notes.TXT', source: 'svc' });
    expect(again.fileId).toBe('svcnotes-1.txt');
  });

  it('numbers ids per instance: the same name elsewhere starts again', async () => {
    expect((await files.upload(there, as.zed, { name: 'Notes.TXT', source: 'svc' })).fileId).toBe('svcnotes.txt');
  });

  it('refuses to complete before the bytes arrive (409, still New), then completes with their size', async () => {
    const { fileId, contentUrl } = await files.upload(here, as.bob, { name: 'late.bin', source: 'svc' });
    expect(await refusal(files.complete(here, as.bob, { fileId }))).toEqual({
      status: 409,
      message: `File ${fileId} has not been uploaded`,
    });
    expect((await stored(fileId))?.status).toBe('New');
    expect(await putBytes(gw, contentUrl as string, Buffer.from('12345678'))).toBe(200);
    expect((await files.complete(here, as.bob, { fileId })).status).toEqual({ status: 'Completed', size: 8 });
    expect(await stored(fileId)).toMatchObject({ status: 'Completed', size: 8n });
  });

  it('refuses to complete a deleted file (409) and leaves it Deleted', async () => {
    const fileId = await completedByBob('gone.txt');
    await files.delete(here, as.alice, { fileId });
    expect(await refusal(files.complete(here, as.bob, { fileId }))).toEqual({ status: 409, message: `File ${fileId} has been deleted` });
    expect((await stored(fileId))?.status).toBe('Deleted');
  });
});

describe('the same 404 for a missing file and a hidden one', () => {
  it('answers a caller without permission, another instance and a missing id alike, on every call', async () => {
    const fileId = await completedByBob('private.txt');
    const calls = [
      (tenant: ResolvedInstance, caller: Caller, id: string) => files.get(tenant, caller, { fileId: id }),
      (tenant: ResolvedInstance, caller: Caller, id: string) => files.contentAddress(tenant, caller, { fileId: id }),
      (tenant: ResolvedInstance, caller: Caller, id: string) => files.delete(tenant, caller, { fileId: id }),
      (tenant: ResolvedInstance, caller: Caller, id: string) => files.setPublic(tenant, caller, { fileId: id, contentPublic: true }),
    ];
    for (const call of calls) {
      const hidden = await refusal(call(here, as.carol, fileId));
      const elsewhere = await refusal(call(there, as.zed, fileId));
      const missing = await refusal(call(here, as.alice, 'no-such-file.txt'));
      expect(hidden).toEqual({ status: 404, message: `File ${fileId} not found` });
      expect(elsewhere).toEqual(hidden);
      expect(missing).toEqual({ status: 404, message: 'File no-such-file.txt not found' });
    }
    expect((await stored(fileId))?.status).toBe('Completed');
    expect(await stored(fileId, there)).toBeNull();
  });

  it('gives anonymous callers the content of a public Completed file only', async () => {
    const fileId = await completedByBob('public.txt');
    expect((await refusal(files.contentAddress(here, undefined, { fileId }))).status).toBe(404);
    await files.setPublic(here, as.alice, { fileId, contentPublic: true });
    expect(await files.contentAddress(here, undefined, { fileId })).toContain('/blobs/');
    // Public content does not reveal the metadata.
    expect((await refusal(files.get(here, as.carol, { fileId }))).status).toBe(404);
  });
});

describe('grants', () => {
  it('metadata, then content, then nothing: what the grantee sees follows each change', async () => {
    const fileId = await completedByBob('shared.txt');
    await files.grant(here, as.alice, { fileId, userId: users.carol.userId, content: false });
    const seen = await files.get(here, as.carol, { fileId });
    expect(seen.contentUrl).toBeUndefined();
    expect(seen.permissions).toBeUndefined();
    expect((await refusal(files.contentAddress(here, as.carol, { fileId }))).status).toBe(404);

    await files.grant(here, as.alice, { fileId, userId: users.carol.userId, content: true });
    expect((await files.get(here, as.carol, { fileId })).contentUrl).toContain('/blobs/');
    expect((await stored(fileId))?.permissions).toContainEqual({ userId: users.carol.userId, contentReadable: true });

    await files.revoke(here, as.alice, { fileId, userId: users.carol.userId });
    expect((await refusal(files.get(here, as.carol, { fileId }))).status).toBe(404);
    expect((await stored(fileId))?.permissions.map((p) => p.userId)).toEqual([users.bob.userId]);
  });

  it('every read of one file gives its permissions as a page of search hits does: by account id, and none once all are revoked', async () => {
    const fileId = await completedByBob('many.txt');
    const other = await completedByBob('many-other.txt');
    await files.grant(here, as.alice, { fileId, userId: users.carol.userId, content: false });
    await files.grant(here, as.alice, { fileId, userId: owners.alice.userId, content: true });
    const repository = new FileRepository(gw.db);
    const [hit] = await files.search(here, as.alice, { template: { fileId }, page: { take: 10, skip: 0 } });
    const expected = [
      { userId: users.bob.userId, contentReadable: true },
      { userId: users.carol.userId, contentReadable: false },
      { userId: owners.alice.userId, contentReadable: true },
    ].sort((a, b) => (a.userId < b.userId ? -1 : 1));
    expect(hit?.permissions).toEqual(expected);
    expect((await files.get(here, as.alice, { fileId })).permissions).toEqual(expected);
    expect((await repository.find(here.instance.id, fileId))?.permissions).toEqual(expected);
    expect((await repository.findListing(here.instance.id, fileId))?.permissions).toEqual(expected);
    const both = await repository.findAll(here.instance.id, [other, fileId]);
    expect(both.map((file) => [file.fileId, file.permissions.length])).toEqual([
      [other, 1],
      [fileId, 3],
    ]);

    for (const userId of [users.bob.userId, users.carol.userId, owners.alice.userId])
      await files.revoke(here, as.alice, { fileId, userId });
    expect((await files.get(here, as.alice, { fileId })).permissions).toEqual([]);
    expect((await repository.findAll(here.instance.id, [fileId]))[0]?.permissions).toEqual([]);
  });

  it('is the owner’s: the uploader who sees the file gets 403, and changes nothing', async () => {
    const fileId = await completedByBob('mine.txt');
    expect(await refusal(files.grant(here, as.bob, { fileId, userId: users.carol.userId, content: true }))).toEqual({
      status: 403,
      message: 'Only the owner of this instance may do this',
    });
    expect(
      (await refusal(files.grantMatching(here, as.bob, { template: { source: 'svc' }, userId: users.carol.userId, content: true }))).status,
    ).toBe(403);
    expect((await stored(fileId))?.permissions.map((p) => p.userId)).toEqual([users.bob.userId]);
  });

  it('names only accounts of this instance: another instance’s owner or a malformed id is a 404 user', async () => {
    const fileId = await completedByBob('local-only.txt');
    for (const userId of [owners.zed.userId, 'not-a-uuid']) {
      expect(await refusal(files.grant(here, as.alice, { fileId, userId, content: false }))).toEqual({
        status: 404,
        message: `User ${userId} not found`,
      });
    }
    expect((await stored(fileId))?.permissions).toHaveLength(1);
  });
});

describe('search', () => {
  it('returns every file to the owner, the permitted ones to an account, none to another instance', async () => {
    const fileId = await completedByBob('findable.txt');
    await files.grant(here, as.alice, { fileId, userId: users.carol.userId, content: false });
    const page = { take: 1000, skip: 0 };
    const ids = async (tenant: ResolvedInstance, caller: Caller, template: FileTemplate) =>
      (await files.search(tenant, caller, { template, page })).map((f) => f.fileId);
    const all = await ids(here, as.alice, { source: 'svc' });
    expect(all).toContain(fileId);
    expect(all.length).toBeGreaterThan(1);
    expect(await ids(here, as.carol, { source: 'svc' })).toEqual([fileId]);
    expect(await ids(there, as.zed, { fileId })).toEqual([]);
  });
});

describe('the signed upload address', () => {
  it('takes bytes while its file is alive: New or Completed, not Deleted nor unknown', async () => {
    const { fileId } = await files.upload(here, as.bob, { name: 'alive.txt', source: 'svc' });
    const key = (id: string) => objectKey(owners.alice.address, id);
    expect(await files.acceptsUpload(here, key(fileId))).toBe(true);
    await files.delete(here, as.alice, { fileId });
    expect(await files.acceptsUpload(here, key(fileId))).toBe(false);
    expect(await files.acceptsUpload(here, key('never-uploaded.txt'))).toBe(false);
  });
});
