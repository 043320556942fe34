// What the files screen asks the server's listing for, and the words a file's state and access are shown in.
import { kindOf } from '../src/files/kinds';
import { DEFAULT_SORT, LISTING_MAX_TAKE, listingPath, NO_FILTER, type FileQuery } from '../src/files/listing';
import { accessWords, stateWords } from '../src/files/words';
import type { FileRecord } from '../src/types';

const OWNER = 'owner-id';
const BOB = 'bob-id';
const CAROL = 'carol-id';

function file(name: string, change: Partial<FileRecord> & { size?: number; minute?: number } = {}): FileRecord {
  const { size = 1, minute = 0, ...rest } = change;
  return {
    fileId: `console${name}`,
    name,
    source: 'console',
    lastUpdated: `2026-11-21T10:${String(minute).padStart(2, '0')}:00.000Z`,
    status: { status: 'Completed', size },
    contentPublic: false,
    permissions: [{ userId: OWNER, contentReadable: true }],
    ...rest,
  };
}

const query = (change: Partial<FileQuery> = {}): FileQuery => ({ filter: NO_FILTER, sort: DEFAULT_SORT, skip: 0, take: 50, ...change });
const paramsOf = (path: string) => Object.fromEntries(new URL(path, 'http://alice.pds.test').searchParams);

describe('listingPath', () => {
  it('asks for the completed files, newest first, one page at a time', () => {
    const path = listingPath(query({ skip: 100 }));
    expect(path.startsWith('/api/v2.6/files/listing?')).toBe(true);
    expect(paramsOf(path)).toEqual({ status: 'Completed', sort: 'date', order: 'desc', skip: '100', take: '50' });
  });

  it('sends each filter the person set, in the server’s words, and no empty one', () => {
    const filter = { text: '  holiday photo ', kind: 'image', tag: 'family', shared: 'yes', public: 'no' } as const;
    expect(paramsOf(listingPath(query({ filter, sort: { by: 'name', descending: false } })))).toEqual({
      status: 'Completed',
      sort: 'name',
      order: 'asc',
      q: 'holiday photo',
      type: 'image',
      tag: 'family',
      shared: 'true',
      public: 'false',
      skip: '0',
      take: '50',
    });
  });

  it('keeps a page within the server’s largest, and lists unfinished uploads apart', () => {
    expect(paramsOf(listingPath(query({ take: 1000 }))).take).toBe(String(LISTING_MAX_TAKE));
    expect(paramsOf(listingPath(query(), 'New')).status).toBe('New');
  });
});

describe('the words a file is shown in', () => {
  const nameOf = (id: string) => ({ [BOB]: 'bob' })[id];

  it('says who can see it, to the owner', () => {
    expect(accessWords(file('a'), OWNER, nameOf)).toBe('Only you');
    expect(
      accessWords(
        file('a', {
          permissions: [
            { userId: OWNER, contentReadable: true },
            { userId: BOB, contentReadable: false },
          ],
        }),
        OWNER,
        nameOf,
      ),
    ).toBe('Shared with bob');
    expect(accessWords(file('a', { permissions: [{ userId: CAROL, contentReadable: true }] }), OWNER, nameOf)).toBe('Shared with 1 person');
    expect(
      accessWords(
        file('a', {
          permissions: [
            { userId: BOB, contentReadable: true },
            { userId: CAROL, contentReadable: true },
          ],
        }),
        OWNER,
        nameOf,
      ),
    ).toBe('Shared with 2 people');
    expect(accessWords(file('a', { contentPublic: true }), OWNER, nameOf)).toBe('Public link');
  });

  it('tells another person only whether it is public (the API does not tell them who else has it)', () => {
    expect(accessWords(file('a', { permissions: undefined }), BOB, nameOf)).toBeUndefined();
    expect(accessWords(file('a', { permissions: undefined, contentPublic: true }), BOB, nameOf)).toBe('Public link');
  });

  it('says Uploaded and Uploading… rather than Completed and New', () => {
    expect(stateWords(file('a'))).toBe('Uploaded');
    expect(stateWords(file('a', { status: { status: 'New' } }))).toBe('Uploading…');
  });

  it.each([
    ['IMG_0001.JPG', 'image'],
    ['scan.pdf', 'pdf'],
    ['letter.docx', 'document'],
    ['notes.md', 'text'],
    ['song.flac', 'audio'],
    ['clip.webm', 'video'],
    ['backup.tar.gz', 'archive'],
    ['README', 'other'],
    ['data.xyz', 'other'],
  ])('takes %s for a file of kind %s', (name, kind) => {
    expect(kindOf(name)).toBe(kind);
  });
});
