// files/access.ts below HTTP: each rule of CONTRACT §2 as one line of a table. A viewer is the owner,
// an account of the instance (a user, or an app acting as its own account) or anonymous; its permission
// on the file is none, metadata (content=false) or content (content=true). The HTTP matrix over every
// route is files-access.test.ts.
import type { FileRecord } from '@pds/db';
import type { Caller } from '../src/context';
import {
  contentReadable,
  requireContent,
  requireEditable,
  requireManageable,
  requireOwner,
  requireVisible,
  rightsOn,
  searchScope,
  viewerOf,
  type Viewer,
} from '../src/files/access';

type ViewerKind = Viewer['kind'];
type Permission = 'none' | 'metadata' | 'content';
type Visibility = 'private' | 'public';
type Status = FileRecord['status'];

const OWNER_ID = '00000000-0000-4000-8000-00000000000a';
const ACCOUNT_ID = '00000000-0000-4000-8000-00000000000b';
/** Another account of the instance, holding a permission on every file: "none" is not "no permission rows". */
const OTHER_ID = '00000000-0000-4000-8000-00000000000c';
const FILE_ID = 'testnotes.txt';

const VIEWERS: Record<ViewerKind, Viewer> = {
  owner: { kind: 'owner', userId: OWNER_ID },
  account: { kind: 'account', userId: ACCOUNT_ID },
  anonymous: { kind: 'anonymous' },
};

/** A file with the account's permission, as the repository returns it. */
function file(permission: Permission, visibility: Visibility = 'private', status: Status = 'Completed', uploaderId = OTHER_ID): FileRecord {
  const permissions = [{ userId: OTHER_ID, contentReadable: true }];
  if (permission !== 'none') permissions.push({ userId: ACCOUNT_ID, contentReadable: permission === 'content' });
  const at = new Date('2026-03-01T00:00:00.000Z');
  return {
    instanceId: '00000000-0000-4000-8000-000000000001',
    fileId: FILE_ID,
    name: 'notes.txt',
    source: 'test',
    tags: [],
    title: null,
    description: null,
    status,
    size: status === 'New' ? null : 5n,
    contentPublic: visibility === 'public',
    thumbnail: false,
    width: null,
    height: null,
    takenAt: null,
    uploaderId,
    dateCreated: at,
    lastUpdated: at,
    createdAt: at,
    trashedAt: null,
    permissions,
  };
}

/** What a require* rule did: handed the file back, or threw with this status (and message). */
function outcomeOf(run: () => unknown, given: FileRecord | null): 'the file' | number {
  try {
    const result = run();
    if (result !== given) throw new Error('the rule returned something else than the file');
    return 'the file';
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === undefined) throw error;
    return status;
  }
}

describe('viewerOf: who calls', () => {
  const caller = (kind: 'owner' | 'user' | 'application', accessScope: 'owner' | 'user' | 'application'): Caller => ({
    user: { id: ACCOUNT_ID, kind, disabled: false, tokensValidAfter: null },
    claims: { iss: 'alice.pds.test', sub: ACCOUNT_ID, iat: 0, exp: 0, jti: 'j', accessScope, auth_time: 0 },
    token: 'token',
    actor: { kind, id: ACCOUNT_ID },
  });

  it.each`
    account          | scope            | viewer
    ${'owner'}       | ${'owner'}       | ${'owner'}
    ${'user'}        | ${'user'}        | ${'account'}
    ${'application'} | ${'application'} | ${'account'}
  `('the $account account with a token of scope $scope is the $viewer', ({ account, scope, viewer }) => {
    expect(viewerOf(caller(account, scope))).toEqual({ kind: viewer, userId: ACCOUNT_ID });
  });

  it('no token is the anonymous viewer', () => {
    expect(viewerOf(undefined)).toEqual({ kind: 'anonymous' });
  });
});

describe('rightsOn: what a viewer may do with a file, whatever its state', () => {
  it.each`
    viewer         | permission    | visibility   | see      | readContent | manage
    ${'owner'}     | ${'none'}     | ${'private'} | ${true}  | ${true}     | ${true}
    ${'owner'}     | ${'none'}     | ${'public'}  | ${true}  | ${true}     | ${true}
    ${'account'}   | ${'none'}     | ${'private'} | ${false} | ${false}    | ${false}
    ${'account'}   | ${'none'}     | ${'public'}  | ${false} | ${true}     | ${false}
    ${'account'}   | ${'metadata'} | ${'private'} | ${true}  | ${false}    | ${false}
    ${'account'}   | ${'metadata'} | ${'public'}  | ${true}  | ${true}     | ${false}
    ${'account'}   | ${'content'}  | ${'private'} | ${true}  | ${true}     | ${false}
    ${'account'}   | ${'content'}  | ${'public'}  | ${true}  | ${true}     | ${false}
    ${'anonymous'} | ${'none'}     | ${'private'} | ${false} | ${false}    | ${false}
    ${'anonymous'} | ${'none'}     | ${'public'}  | ${false} | ${true}     | ${false}
  `(
    '$viewer, permission $permission, $visibility file: see $see, read content $readContent, manage $manage',
    ({ viewer, permission, visibility, see, readContent, manage }) => {
      expect(rightsOn(VIEWERS[viewer as ViewerKind], file(permission, visibility))).toEqual({ see, readContent, manage });
    },
  );
});

describe('contentReadable: whether a content address is handed out', () => {
  it.each`
    viewer         | permission    | visibility   | status         | readable
    ${'owner'}     | ${'none'}     | ${'private'} | ${'Completed'} | ${true}
    ${'owner'}     | ${'none'}     | ${'private'} | ${'New'}       | ${false}
    ${'owner'}     | ${'none'}     | ${'private'} | ${'Deleted'}   | ${false}
    ${'account'}   | ${'content'}  | ${'private'} | ${'Completed'} | ${true}
    ${'account'}   | ${'content'}  | ${'private'} | ${'New'}       | ${false}
    ${'account'}   | ${'content'}  | ${'private'} | ${'Deleted'}   | ${false}
    ${'account'}   | ${'metadata'} | ${'private'} | ${'Completed'} | ${false}
    ${'account'}   | ${'metadata'} | ${'public'}  | ${'Completed'} | ${true}
    ${'account'}   | ${'none'}     | ${'public'}  | ${'Completed'} | ${true}
    ${'account'}   | ${'none'}     | ${'public'}  | ${'New'}       | ${false}
    ${'anonymous'} | ${'none'}     | ${'public'}  | ${'Completed'} | ${true}
    ${'anonymous'} | ${'none'}     | ${'public'}  | ${'Deleted'}   | ${false}
    ${'anonymous'} | ${'none'}     | ${'private'} | ${'Completed'} | ${false}
  `('$viewer, permission $permission, $visibility $status file: $readable', ({ viewer, permission, visibility, status, readable }) => {
    expect(contentReadable(VIEWERS[viewer as ViewerKind], file(permission, visibility, status))).toBe(readable);
  });
});

describe('the require* rules: the file, 403 for a file the caller sees but may not touch, else the same 404', () => {
  const RULES = { requireVisible, requireContent, requireManageable, requireEditable };

  it.each`
    rule                   | viewer         | permission    | visibility   | status         | uploader | outcome
    ${'requireVisible'}    | ${'owner'}     | ${'none'}     | ${'private'} | ${'New'}       | ${false} | ${'the file'}
    ${'requireVisible'}    | ${'account'}   | ${'metadata'} | ${'private'} | ${'Completed'} | ${false} | ${'the file'}
    ${'requireVisible'}    | ${'account'}   | ${'none'}     | ${'public'}  | ${'Completed'} | ${false} | ${404}
    ${'requireVisible'}    | ${'anonymous'} | ${'none'}     | ${'public'}  | ${'Completed'} | ${false} | ${404}
    ${'requireContent'}    | ${'owner'}     | ${'none'}     | ${'private'} | ${'Completed'} | ${false} | ${'the file'}
    ${'requireContent'}    | ${'owner'}     | ${'none'}     | ${'private'} | ${'New'}       | ${false} | ${404}
    ${'requireContent'}    | ${'account'}   | ${'content'}  | ${'private'} | ${'Completed'} | ${false} | ${'the file'}
    ${'requireContent'}    | ${'account'}   | ${'metadata'} | ${'private'} | ${'Completed'} | ${false} | ${404}
    ${'requireContent'}    | ${'account'}   | ${'metadata'} | ${'public'}  | ${'Completed'} | ${false} | ${'the file'}
    ${'requireContent'}    | ${'anonymous'} | ${'none'}     | ${'public'}  | ${'Completed'} | ${false} | ${'the file'}
    ${'requireContent'}    | ${'anonymous'} | ${'none'}     | ${'private'} | ${'Completed'} | ${false} | ${404}
    ${'requireManageable'} | ${'owner'}     | ${'none'}     | ${'private'} | ${'Completed'} | ${false} | ${'the file'}
    ${'requireManageable'} | ${'account'}   | ${'content'}  | ${'private'} | ${'Completed'} | ${true}  | ${403}
    ${'requireManageable'} | ${'account'}   | ${'none'}     | ${'public'}  | ${'Completed'} | ${false} | ${404}
    ${'requireManageable'} | ${'anonymous'} | ${'none'}     | ${'public'}  | ${'Completed'} | ${false} | ${404}
    ${'requireEditable'}   | ${'owner'}     | ${'none'}     | ${'private'} | ${'Completed'} | ${false} | ${'the file'}
    ${'requireEditable'}   | ${'account'}   | ${'content'}  | ${'private'} | ${'Completed'} | ${true}  | ${'the file'}
    ${'requireEditable'}   | ${'account'}   | ${'metadata'} | ${'private'} | ${'Completed'} | ${true}  | ${'the file'}
    ${'requireEditable'}   | ${'account'}   | ${'content'}  | ${'private'} | ${'Completed'} | ${false} | ${403}
    ${'requireEditable'}   | ${'account'}   | ${'none'}     | ${'private'} | ${'Completed'} | ${true}  | ${404}
    ${'requireEditable'}   | ${'anonymous'} | ${'none'}     | ${'public'}  | ${'Completed'} | ${false} | ${404}
  `(
    '$rule: $viewer, permission $permission, $visibility $status file, its uploader $uploader: $outcome',
    ({ rule, viewer, permission, visibility, status, uploader, outcome }) => {
      const given = file(permission, visibility, status, uploader ? ACCOUNT_ID : OTHER_ID);
      const check = RULES[rule as keyof typeof RULES] as (viewer: Viewer, file: FileRecord | null, fileId: string) => FileRecord;
      expect(outcomeOf(() => check(VIEWERS[viewer as ViewerKind], given, FILE_ID), given)).toBe(outcome);
    },
  );

  it.each(Object.keys(RULES))('%s answers a missing file with the 404 of a file one may not see, for the owner too', (rule) => {
    const check = RULES[rule as keyof typeof RULES] as (viewer: Viewer, file: FileRecord | null, fileId: string) => FileRecord;
    const missing = () => check(VIEWERS.owner, null, FILE_ID);
    const hidden = () => check(VIEWERS.account, file('none'), FILE_ID);
    expect(missing).toThrow(expect.objectContaining({ status: 404, message: `File ${FILE_ID} not found` }));
    expect(hidden).toThrow(expect.objectContaining({ status: 404, message: `File ${FILE_ID} not found` }));
  });
});

describe('calls that name no file', () => {
  it.each`
    viewer         | outcome
    ${'owner'}     | ${'allowed'}
    ${'account'}   | ${403}
    ${'anonymous'} | ${403}
  `('requireOwner (bulk grants): $viewer: $outcome', ({ viewer, outcome }) => {
    const run = () => requireOwner(VIEWERS[viewer as ViewerKind]);
    if (outcome === 'allowed') expect(run).not.toThrow();
    else expect(run).toThrow(expect.objectContaining({ status: outcome }));
  });

  it.each`
    viewer         | scope
    ${'owner'}     | ${{ all: true }}
    ${'account'}   | ${{ userId: ACCOUNT_ID }}
    ${'anonymous'} | ${401}
  `('searchScope: $viewer searches $scope', ({ viewer, scope }) => {
    const run = () => searchScope(VIEWERS[viewer as ViewerKind]);
    if (typeof scope === 'number') expect(run).toThrow(expect.objectContaining({ status: scope }));
    else expect(run()).toEqual(scope);
  });
});
