// The files screen's listing as a function: filter, sort and page any number of files, the total
// and the bytes of what matches; and the words a file's state and access are shown in.
import { kindOf } from '../src/files/kinds';
import { DEFAULT_SORT, NO_FILTER, pageOf, type FileQuery } from '../src/files/listing';
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
const names = (files: FileRecord[]) => files.map((f) => f.name);

describe('pageOf', () => {
  const many = Array.from({ length: 250 }, (_, i) => file(`file-${i + 1}.txt`, { size: i + 1, minute: i % 60 }));

  it('pages through every file once, with the total and the bytes of all of them', () => {
    const seen = new Set<string>();
    for (let skip = 0; skip < 250; skip += 50) {
      const page = pageOf(many, query({ skip }), OWNER);
      expect(page.total).toBe(250);
      expect(page.totalBytes).toBe((250 * 251) / 2);
      expect(page.files).toHaveLength(50);
      page.files.forEach((f) => seen.add(f.fileId));
    }
    expect(seen.size).toBe(250);
    expect(pageOf(many, query({ skip: 250 }), OWNER).files).toEqual([]);
  });

  it('sorts names with their numbers in order, either way', () => {
    const files = [file('b10.txt'), file('B2.txt'), file('a.txt')];
    expect(names(pageOf(files, query({ sort: { by: 'name', descending: false } }), OWNER).files)).toEqual(['a.txt', 'B2.txt', 'b10.txt']);
    expect(names(pageOf(files, query({ sort: { by: 'name', descending: true } }), OWNER).files)).toEqual(['b10.txt', 'B2.txt', 'a.txt']);
  });

  it('sorts by size and by date, and keeps one order for equal ones from page to page', () => {
    const files = [
      file('small', { size: 1, minute: 3 }),
      file('big', { size: 900, minute: 1 }),
      file('same-a', { size: 5 }),
      file('same-b', { size: 5 }),
    ];
    expect(names(pageOf(files, query({ sort: { by: 'size', descending: true } }), OWNER).files)).toEqual([
      'big',
      'same-a',
      'same-b',
      'small',
    ]);
    expect(names(pageOf(files, query({ sort: { by: 'date', descending: true } }), OWNER).files)[0]).toBe('small');
    expect(names(pageOf(files, query({ sort: { by: 'date', descending: false } }), OWNER).files).slice(0, 2)).toEqual(['same-a', 'same-b']);
  });

  it('filters by words in the name or title, type, tag, shared and public link', () => {
    const files = [
      file('holiday.jpg', { tags: ['trip'], contentPublic: true }),
      file('notes.txt', {
        title: 'Weekly shopping',
        permissions: [
          { userId: OWNER, contentReadable: true },
          { userId: BOB, contentReadable: true },
        ],
      }),
      file('report.pdf', { tags: ['work', 'trip'] }),
    ];
    const only = (filter: Partial<typeof NO_FILTER>) => names(pageOf(files, query({ filter: { ...NO_FILTER, ...filter } }), OWNER).files);
    expect(only({ text: 'SHOPPING' })).toEqual(['notes.txt']);
    expect(only({ text: 'holi' })).toEqual(['holiday.jpg']);
    expect(only({ kind: 'image' })).toEqual(['holiday.jpg']);
    expect(only({ kind: 'pdf' })).toEqual(['report.pdf']);
    expect(only({ tag: 'trip' }).sort()).toEqual(['holiday.jpg', 'report.pdf']);
    expect(only({ shared: 'yes' })).toEqual(['notes.txt']);
    expect(only({ shared: 'no' }).sort()).toEqual(['holiday.jpg', 'report.pdf']);
    expect(only({ public: 'yes' })).toEqual(['holiday.jpg']);
    expect(only({ tag: 'trip', public: 'no' })).toEqual(['report.pdf']);
    const page = pageOf(files, query({ filter: { ...NO_FILTER, kind: 'image' } }), OWNER);
    expect(page.total).toBe(1);
    // The tag filter offers every tag in use, not only those of the files shown.
    expect(page.tags).toEqual(['trip', 'work']);
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
