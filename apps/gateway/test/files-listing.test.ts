// GET /api/v2.6/files/listing and /files/tags as clients see them: one page of one state's files,
// filtered and sorted, with how many match and their bytes, within the visibility of search.
import { addUser, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { call, startFilesGateway, uploadFile, type As } from './files-support';

let gw: TestGateway;
let alice: SignedUp;
let bob: Awaited<ReturnType<typeof addUser>>;
let carol: Awaited<ReturnType<typeof addUser>>;
let owner: As;
let asBob: As;

/** Uploaded by alice unless `by`, one second apart so "newest first" is the reverse of this order. */
const FILES = [
  { name: 'Holiday_photo.jpg', source: 'camera', tags: ['holiday', 'family'], bytes: 300 },
  { name: 'report.pdf', source: 'work', title: 'Quarterly report', tags: ['work'], bytes: 100 },
  { name: 'notes.txt', source: 'console', description: 'shopping list for the weekend', bytes: 50 },
  { name: 'backup-2024.ZIP', source: 'console', bytes: 200, public: true },
  { name: 'README', source: 'console', bytes: 10 },
  { name: 'bob.txt', source: 'console', bytes: 7, by: 'bob' },
];
const ids: Record<string, string> = {};

beforeAll(async () => {
  gw = await startFilesGateway('local');
  alice = await signUp(gw.app, 'alice');
  bob = await addUser(gw.app, alice, 'bob');
  carol = await addUser(gw.app, alice, 'carol');
  owner = { address: alice.address, token: alice.token };
  asBob = { address: alice.address, token: bob.token };
  for (const file of FILES) {
    gw.clock.advance(1);
    const { bytes, by, public: makePublic, ...meta } = file;
    const uploaded = await uploadFile(gw, by === 'bob' ? asBob : owner, meta, Buffer.alloc(bytes, 1));
    ids[file.name] = uploaded.fileId;
    if (makePublic) expect((await call(gw, 'get', `/allowAccessPublic/${uploaded.fileId}`, owner)).status).toBe(200);
  }
  // Shared with bob: one he may open, one he may only see.
  expect((await call(gw, 'get', `/allowAccess/${ids['report.pdf']}/${bob.userId}?content=true`, owner)).status).toBe(200);
  expect((await call(gw, 'get', `/allowAccess/${ids['notes.txt']}/${bob.userId}`, owner)).status).toBe(200);
  // Neither a New nor a Deleted file is listed as a completed one.
  expect((await call(gw, 'post', '/upload', owner, { name: 'unfinished.png', source: 'console' })).status).toBe(200);
  const gone = await uploadFile(gw, owner, { name: 'gone.txt', source: 'console' });
  expect((await call(gw, 'delete', `/file/${gone.fileId}`, owner)).status).toBe(200);
});
afterAll(() => gw.close());

const list = (as: As, query = '') => call(gw, 'get', `/listing${query ? `?${query}` : ''}`, as);
const names = (body: { files: { name: string }[] }) => body.files.map((file) => file.name);

describe('the owner', () => {
  it('gets the completed files, newest first, with how many there are and their bytes', async () => {
    const res = await list(owner);
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(['bob.txt', 'README', 'backup-2024.ZIP', 'notes.txt', 'report.pdf', 'Holiday_photo.jpg']);
    expect(res.body).toMatchObject({ total: 6, totalBytes: 667 });
    // The records of search: permissions for the owner, and a content address.
    const report = res.body.files.find((file: { name: string }) => file.name === 'report.pdf');
    expect(report).toMatchObject({ fileId: ids['report.pdf'], title: 'Quarterly report', status: { status: 'Completed', size: 100 } });
    expect(report.permissions).toEqual(expect.arrayContaining([{ userId: bob.userId, contentReadable: true }]));
    expect(report.contentUrl).toEqual(expect.any(String));
  });

  it('pages through every file with the same total on each page', async () => {
    const seen: string[] = [];
    for (let skip = 0; skip < 6; skip += 4) {
      const res = await list(owner, `take=4&skip=${skip}`);
      expect(res.body.total).toBe(6);
      seen.push(...names(res.body));
    }
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);
  });

  it('sorts by name (A–Z first, any case), size (largest first) and date, either way round', async () => {
    expect(names((await list(owner, 'sort=name')).body)).toEqual([
      'backup-2024.ZIP',
      'bob.txt',
      'Holiday_photo.jpg',
      'notes.txt',
      'README',
      'report.pdf',
    ]);
    expect(names((await list(owner, 'sort=name&order=desc')).body)).toEqual([
      'report.pdf',
      'README',
      'notes.txt',
      'Holiday_photo.jpg',
      'bob.txt',
      'backup-2024.ZIP',
    ]);
    expect(names((await list(owner, 'sort=size')).body)).toEqual([
      'Holiday_photo.jpg',
      'backup-2024.ZIP',
      'report.pdf',
      'notes.txt',
      'README',
      'bob.txt',
    ]);
    expect(names((await list(owner, 'sort=size&order=asc')).body)).toEqual([
      'bob.txt',
      'README',
      'notes.txt',
      'report.pdf',
      'backup-2024.ZIP',
      'Holiday_photo.jpg',
    ]);
    expect(names((await list(owner, 'sort=date&order=asc')).body)).toEqual([
      'Holiday_photo.jpg',
      'report.pdf',
      'notes.txt',
      'backup-2024.ZIP',
      'README',
      'bob.txt',
    ]);
  });

  it('finds words at the start of any word of the name, source, title or description, and totals the matches', async () => {
    const found = async (q: string) => names((await list(owner, `q=${encodeURIComponent(q)}`)).body);
    expect(await found('photo')).toEqual(['Holiday_photo.jpg']);
    expect(await found('HOLI')).toEqual(['Holiday_photo.jpg']);
    expect(await found('camera')).toEqual(['Holiday_photo.jpg']);
    expect(await found('quarter')).toEqual(['report.pdf']);
    expect(await found('weekend shop')).toEqual(['notes.txt']);
    expect(await found('txt')).toEqual(['bob.txt', 'notes.txt']);
    expect(await found('liday')).toEqual([]);
    // Names cut at - . _ / @ : into words, as a person reads them.
    expect(await found('backup-20')).toEqual(['backup-2024.ZIP']);
    expect(await found('2024')).toEqual(['backup-2024.ZIP']);
    const totals = await list(owner, 'q=txt');
    expect(totals.body).toMatchObject({ total: 2, totalBytes: 57 });
  });

  it('filters by the kind the extension says, by tag, by public link and by sharing', async () => {
    expect(names((await list(owner, 'type=image')).body)).toEqual(['Holiday_photo.jpg']);
    expect(names((await list(owner, 'type=archive')).body)).toEqual(['backup-2024.ZIP']);
    expect(names((await list(owner, 'type=text')).body)).toEqual(['bob.txt', 'notes.txt']);
    expect(names((await list(owner, 'type=other')).body)).toEqual(['README']);
    expect(names((await list(owner, 'tag=family')).body)).toEqual(['Holiday_photo.jpg']);
    expect(names((await list(owner, 'public=true')).body)).toEqual(['backup-2024.ZIP']);
    expect((await list(owner, 'public=false')).body.total).toBe(5);
    // Shared: an account other than the owner holds a permission (bob's upload is his own).
    expect(names((await list(owner, 'shared=true')).body)).toEqual(['bob.txt', 'notes.txt', 'report.pdf']);
    expect(names((await list(owner, 'shared=false&sort=name')).body)).toEqual(['backup-2024.ZIP', 'Holiday_photo.jpg', 'README']);
    // Empty parameters, as a form sends them, are no condition.
    expect((await list(owner, 'q=&type=&tag=&shared=&public=')).body.total).toBe(6);
  });

  it('lists unfinished uploads apart', async () => {
    const res = await list(owner, 'status=New');
    expect(names(res.body)).toEqual(['unfinished.png']);
    expect(res.body).toMatchObject({ total: 1, totalBytes: 0 });
  });

  it('gets every tag of the completed files, sorted', async () => {
    const res = await call(gw, 'get', '/tags', owner);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ tags: ['family', 'holiday', 'work'] });
  });
});

describe('another account', () => {
  it('gets only the files it holds a permission on, without the permission lists', async () => {
    const res = await list(asBob);
    expect(names(res.body)).toEqual(['bob.txt', 'notes.txt', 'report.pdf']);
    expect(res.body).toMatchObject({ total: 3, totalBytes: 157 });
    for (const file of res.body.files) expect(file.permissions).toBeUndefined();
    const notes = res.body.files.find((file: { name: string }) => file.name === 'notes.txt');
    // Seen, not readable: no content address.
    expect(notes.contentUrl).toBeUndefined();
    expect((await call(gw, 'get', '/tags', asBob)).body).toEqual({ tags: ['work'] });
  });

  it('sees nothing of files nobody shared with it', async () => {
    const asCarol = { address: alice.address, token: carol.token };
    expect((await list(asCarol)).body).toEqual({ files: [], total: 0, totalBytes: 0 });
    expect((await list(asCarol, 'q=photo')).body.total).toBe(0);
  });

  it('may not filter by sharing (who else has a file is the owner’s business)', async () => {
    const res = await list(asBob, 'shared=true');
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('Forbidden');
  });
});

describe('refusals', () => {
  it('answers 401 without a token and 400 naming the parameter for bad input', async () => {
    expect((await list({ address: alice.address })).status).toBe(401);
    for (const [query, field] of [
      ['take=201', 'take'],
      ['take=0', 'take'],
      ['skip=-1', 'skip'],
      ['sort=owner', 'sort'],
      ['order=up', 'order'],
      ['type=photo', 'type'],
      ['status=Deleted', 'status'],
      ['public=yes', 'public'],
      [`q=${'a'.repeat(257)}`, 'q'],
    ]) {
      const res = await list(owner, query);
      expect({ query, status: res.status, error: res.body.error }).toEqual({ query, status: 400, error: 'Bad Request' });
      expect(res.body.message).toContain(field);
    }
  });

  it('takes query syntax as plain words', async () => {
    for (const q of ["' OR 1=1 --", 'a & b | !c', ':*', '(photo']) {
      const res = await list(owner, `q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(200);
    }
    expect(names((await list(owner, `q=${encodeURIComponent('(photo')}`)).body)).toEqual(['Holiday_photo.jpg']);
  });
});
