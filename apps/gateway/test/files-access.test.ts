// The permission matrix of CONTRACT §2: every file call, as every kind of caller, on a fresh file
// uploaded by `uploader`, shared with `metadata` (content=false) and `content` (content=true).
import type { TestGateway } from '../../../test/support/gateway';
import { useGateway } from '../../../test/support/use-gateway';
import { call, fileTables, STORES, uploadFile, type As } from './files-support';

type Role = 'owner' | 'uploader' | 'metadata' | 'content' | 'stranger' | 'otherInstance' | 'foreignToken' | 'anonymous';
const ROLES: Role[] = ['owner', 'uploader', 'metadata', 'content', 'stranger', 'otherInstance', 'foreignToken', 'anonymous'];

interface Op {
  name: string;
  run(gw: TestGateway, as: As, fileId: string, target: string): ReturnType<typeof call>;
  /** Expected status per role. */
  expect: Record<Role, number>;
}

const OWNER_ONLY = {
  owner: 200,
  uploader: 403,
  metadata: 403,
  content: 403,
  stranger: 404,
  otherInstance: 404,
  foreignToken: 401,
  anonymous: 401,
};

const OPS: Op[] = [
  {
    name: 'get',
    run: (gw, as, id) => call(gw, 'get', `/file/${id}`, as),
    expect: {
      owner: 200,
      uploader: 200,
      metadata: 200,
      content: 200,
      stranger: 404,
      otherInstance: 404,
      foreignToken: 401,
      anonymous: 401,
    },
  },
  {
    name: 'content',
    run: (gw, as, id) => call(gw, 'get', `/content/${id}`, as),
    expect: {
      owner: 303,
      uploader: 303,
      metadata: 404,
      content: 303,
      stranger: 404,
      otherInstance: 404,
      foreignToken: 401,
      anonymous: 404,
    },
  },
  {
    name: 'complete',
    run: (gw, as, id) => call(gw, 'put', `/file/${id}/complete`, as),
    expect: {
      owner: 200,
      uploader: 200,
      metadata: 200,
      content: 200,
      stranger: 404,
      otherInstance: 404,
      foreignToken: 401,
      anonymous: 401,
    },
  },
  { name: 'delete', run: (gw, as, id) => call(gw, 'delete', `/file/${id}`, as), expect: OWNER_ONLY },
  { name: 'allowAccess', run: (gw, as, id, user) => call(gw, 'get', `/allowAccess/${id}/${user}?content=true`, as), expect: OWNER_ONLY },
  { name: 'restrictAccess', run: (gw, as, id, user) => call(gw, 'get', `/restrictAccess/${id}/${user}`, as), expect: OWNER_ONLY },
  { name: 'allowAccessPublic', run: (gw, as, id) => call(gw, 'get', `/allowAccessPublic/${id}`, as), expect: OWNER_ONLY },
  { name: 'restrictAccessPublic', run: (gw, as, id) => call(gw, 'get', `/restrictAccessPublic/${id}`, as), expect: OWNER_ONLY },
  {
    name: 'bulk allowAccess',
    run: (gw, as, id, user) => call(gw, 'post', `/allowAccess/${user}`, as, { fileId: id }),
    // Another instance's owner is an owner, but the user named is not one of its accounts.
    expect: {
      owner: 200,
      uploader: 403,
      metadata: 403,
      content: 403,
      stranger: 403,
      otherInstance: 404,
      foreignToken: 401,
      anonymous: 401,
    },
  },
  {
    name: 'bulk restrictAccess',
    run: (gw, as, id, user) => call(gw, 'post', `/restrictAccess/${user}`, as, { fileId: id }),
    expect: {
      owner: 200,
      uploader: 403,
      metadata: 403,
      content: 403,
      stranger: 403,
      otherInstance: 404,
      foreignToken: 401,
      anonymous: 401,
    },
  },
];

describe.each(STORES)('file permissions on the %s store', (store) => {
  const {
    gw,
    owners,
    users: accounts,
  } = useGateway({
    store,
    owners: ['alice', 'zed'],
    users: { bob: 'alice', carol: 'alice', dave: 'alice', erin: 'alice' },
  });
  const { alice, zed } = owners;
  const users = { uploader: accounts.bob, metadata: accounts.carol, content: accounts.dave, stranger: accounts.erin };
  let callers: Record<Role, As>;
  beforeAll(() => {
    const here = (token?: string) => ({ address: alice.address, token });
    callers = {
      owner: here(alice.token),
      uploader: here(users.uploader.token),
      metadata: here(users.metadata.token),
      content: here(users.content.token),
      stranger: here(users.stranger.token),
      otherInstance: { address: zed.address, token: zed.token },
      foreignToken: here(zed.token),
      anonymous: here(),
    };
  });

  async function sharedFile(): Promise<string> {
    const file = await uploadFile(gw, callers.uploader, { name: 'm.txt', source: 'matrix' });
    await call(gw, 'get', `/allowAccess/${file.fileId}/${users.metadata.userId}?content=false`, callers.owner).expect(200);
    await call(gw, 'get', `/allowAccess/${file.fileId}/${users.content.userId}?content=true`, callers.owner).expect(200);
    return file.fileId;
  }

  const cases = OPS.flatMap((op) => ROLES.map((role) => [op.name, role, op.expect[role], op] as const));

  it.each(cases)('%s as %s answers %i; a refusal changes nothing', async (_name, role, status, op) => {
    const fileId = await sharedFile();
    const before = await fileTables(gw);
    const res = await op.run(gw, callers[role], fileId, users.stranger.userId);
    expect(res.status).toBe(status);
    if (status >= 400) {
      expect(await fileTables(gw)).toEqual(before);
      expect(Object.keys(res.body).sort()).toEqual(['error', 'message']);
    }
    if (status === 404 && op.name !== 'bulk allowAccess' && op.name !== 'bulk restrictAccess') {
      // Indistinguishable from a file that does not exist.
      const missing = await op.run(gw, callers[role], 'no-such-file.txt', users.stranger.userId);
      expect(missing.status).toBe(404);
      expect(res.body.message).toBe(`File ${fileId} not found`);
      expect(missing.body.message).toBe('File no-such-file.txt not found');
    }
  });

  it('search finds the file only for those who may see it', async () => {
    const fileId = await sharedFile();
    const expected: Record<Role, boolean | number> = {
      owner: true,
      uploader: true,
      metadata: true,
      content: true,
      stranger: false,
      otherInstance: false,
      foreignToken: 401,
      anonymous: 401,
    };
    for (const role of ROLES) {
      const res = await call(gw, 'post', '/search', callers[role], { fileId });
      if (typeof expected[role] === 'number') {
        expect([role, res.status]).toEqual([role, expected[role]]);
        continue;
      }
      expect([role, res.status]).toEqual([role, 200]);
      expect([role, res.body.map((f: { fileId: string }) => f.fileId)]).toEqual([role, expected[role] ? [fileId] : []]);
      if (expected[role]) {
        expect([role, 'contentUrl' in res.body[0]]).toEqual([role, role !== 'metadata']);
        expect([role, 'permissions' in res.body[0]]).toEqual([role, role === 'owner']);
      }
    }
  });

  it('the owner may revoke the uploader, who then sees nothing', async () => {
    const fileId = await sharedFile();
    await call(gw, 'get', `/restrictAccess/${fileId}/${users.uploader.userId}`, callers.owner).expect(200);
    expect((await call(gw, 'get', `/file/${fileId}`, callers.uploader)).status).toBe(404);
  });

  it('granting twice updates the entry', async () => {
    const fileId = await sharedFile();
    await call(gw, 'get', `/allowAccess/${fileId}/${users.metadata.userId}?content=true`, callers.owner).expect(200);
    const res = await call(gw, 'get', `/allowAccess/${fileId}/${users.metadata.userId}`, callers.owner);
    expect(res.status).toBe(200);
    expect(res.body.permissions).toContainEqual({ userId: users.metadata.userId, contentReadable: false });
    expect(res.body.permissions.filter((p: { userId: string }) => p.userId === users.metadata.userId)).toHaveLength(1);
  });

  it('answers 404 naming the unknown user of a single grant', async () => {
    const fileId = await sharedFile();
    const res = await call(gw, 'get', `/allowAccess/${fileId}/${zed.userId}`, callers.owner);
    expect(res.status).toBe(404);
    expect(res.body.message).toBe(`User ${zed.userId} not found`);
  });
});
