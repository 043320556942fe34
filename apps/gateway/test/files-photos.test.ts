// The photo timeline (GET /files/photos) as clients see it: the pictures that have a thumbnail, newest
// first, paged by a cursor, each with its thumbnail's size and signed addresses; another account sees
// only the pictures whose content it was given. Then its statements over 10,000 pictures, as PostgreSQL
// plans them: every page, however deep, is a range of the photos index, never a sort or a table scan.
import sharp from 'sharp';
import { FileRepository, listenToStatements } from '@pds/db';
import type { PhotosJson } from '../src/files/service';
import { thumbnailProcessor } from '../src/jobs/thumbnail';
import { addUser, signUp, type SignedUp, type TestGateway } from '../../../test/support/gateway';
import { explain, planOf as plan } from '../../../test/support/plan';
import { call, getBytes, startFilesGateway, uploadFile, type As } from './files-support';

let gw: TestGateway;
let alice: SignedUp;
let owner: As;
let bob: As;
let bobId: string;
let instanceId: string;

beforeAll(async () => {
  gw = await startFilesGateway('local');
  alice = await signUp(gw.app, 'alice');
  owner = { address: alice.address, token: alice.token };
  const added = await addUser(gw.app, alice, 'bob');
  bob = { address: alice.address, token: added.token };
  bobId = added.userId;
  instanceId = (await gw.registry.resolve(alice.address))!.instance.id;
});
afterAll(() => gw.close());

const jpeg = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 120, b: 40 } } })
    .jpeg()
    .toBuffer();

/** Uploads a picture taken at `date` and makes its thumbnail as the worker's job does. */
async function picture(name: string, date: string, width = 1200, height = 800): Promise<string> {
  const { fileId } = await uploadFile(gw, owner, { name, source: 'camera', dateCreated: date }, await jpeg(width, height));
  const made = await thumbnailProcessor({ files: new FileRepository(gw.db), store: gw.blobStore })({
    data: { instanceId, address: alice.address, fileId },
  });
  expect(made).toMatchObject({ made: true });
  return fileId as string;
}

type PhotoPage = PhotosJson;

describe('GET /files/photos', () => {
  let beach: string;
  let hills: string;
  let portrait: string;

  beforeAll(async () => {
    beach = await picture('beach.jpg', '2025-07-14T10:00:00.000Z');
    hills = await picture('hills.jpg', '2025-07-15T18:30:00.000Z');
    portrait = await picture('portrait.jpg', '2024-12-24T20:00:00.000Z', 600, 900);
    // Neither a text file nor a picture in the trash is in the timeline.
    await uploadFile(gw, owner, { name: 'notes.txt', source: 'console', dateCreated: '2025-08-01T00:00:00.000Z' });
    const gone = await picture('gone.jpg', '2025-09-01T00:00:00.000Z');
    await call(gw, 'delete', `/file/${gone}`, owner).expect(200);
  });

  it('lists the pictures newest first, a page at a time, with their sizes, the count and signed addresses', async () => {
    const first = (await call(gw, 'get', '/photos?take=2', owner).expect(200)).body as PhotoPage;
    expect(first.total).toBe(3);
    expect(first.photos.map((photo) => [photo.fileId, photo.date, photo.width, photo.height])).toEqual([
      [hills, '2025-07-15T18:30:00.000Z', 320, 213],
      [beach, '2025-07-14T10:00:00.000Z', 320, 213],
    ]);
    expect(first.next).toEqual(expect.any(String));
    const thumbnail = await getBytes(gw, first.photos[0]!.thumbnailUrl);
    expect(thumbnail.status).toBe(200);
    expect((await sharp(thumbnail.body).metadata()).format).toBe('webp');
    const content = await getBytes(gw, first.photos[0]!.contentUrl);
    expect((await sharp(content.body).metadata()).width).toBe(1200);

    const second = (await call(gw, 'get', `/photos?take=2&cursor=${first.next}`, owner).expect(200)).body as PhotoPage;
    expect(second.photos.map((photo) => [photo.fileId, photo.width, photo.height])).toEqual([[portrait, 213, 320]]);
    expect(second.next).toBeNull();
    expect(second.total).toBeUndefined();
  });

  it('shows another account only the pictures whose content it was given', async () => {
    await call(gw, 'get', `/allowAccess/${beach}/${bobId}?content=false`, owner).expect(200);
    await call(gw, 'get', `/allowAccess/${portrait}/${bobId}?content=true`, owner).expect(200);
    const page = (await call(gw, 'get', '/photos', bob).expect(200)).body as PhotoPage;
    expect(page).toMatchObject({ total: 1, next: null });
    expect(page.photos.map((photo) => photo.fileId)).toEqual([portrait]);
  });

  it('dates a picture by when its camera took it (EXIF), not by its upload, at the offset the camera wrote', async () => {
    const exif = (taken: string, offset?: string) =>
      sharp({ create: { width: 300, height: 200, channels: 3, background: { r: 40, g: 90, b: 160 } } })
        .jpeg()
        .withExif({ IFD2: { DateTimeOriginal: taken, ...(offset ? { OffsetTimeOriginal: offset } : {}) } })
        .toBuffer();
    const upload = async (name: string, bytes: Buffer) => {
      // Uploaded today: without its EXIF date it would head the timeline.
      const { fileId } = await uploadFile(gw, owner, { name, source: 'phone' }, bytes);
      await thumbnailProcessor({ files: new FileRepository(gw.db), store: gw.blobStore })({
        data: { instanceId, address: alice.address, fileId },
      });
      return fileId as string;
    };
    const lake = await upload('lake.jpg', await exif('2019:06:01 14:05:09', '+02:00'));
    const snow = await upload('snow.jpg', await exif('2018:01:02 09:00:00'));
    // A camera without a clock writes 1970: the upload's date stands.
    const clockless = await upload('clockless.jpg', await exif('1970:01:01 00:00:00'));
    const page = (await call(gw, 'get', '/photos?take=500', owner).expect(200)).body as PhotoPage;
    const dated = page.photos.map((photo) => [photo.fileId, photo.date, photo.localDate]);
    expect(dated[0]).toEqual([clockless, expect.stringMatching(new RegExp(`^${new Date().toISOString().slice(0, 10)}`)), undefined]);
    // The instant orders the timeline; the camera's clock, without a zone, is the day it is shown under.
    expect(dated.slice(-2)).toEqual([
      [lake, '2019-06-01T12:05:09.000Z', '2019-06-01T14:05:09.000'],
      [snow, '2018-01-02T09:00:00.000Z', '2018-01-02T09:00:00.000'],
    ]);
    for (const fileId of [lake, snow, clockless]) await call(gw, 'delete', `/file/${fileId}`, owner).expect(200);
  });

  it('refuses a cursor it did not give, a page too large, and a caller without a token', async () => {
    for (const query of ['cursor=not-a-cursor', `cursor=${Buffer.from('[1,2]').toString('base64url')}`, 'take=501', 'take=0']) {
      const res = await call(gw, 'get', `/photos?${query}`, owner).expect(400);
      expect(res.body).toEqual({ error: expect.any(String), message: expect.any(String) });
    }
    await call(gw, 'get', '/photos', { address: alice.address }).expect(401);
  });
});

const PICTURES = 10_000;

describe(`the timeline's statements over ${PICTURES.toLocaleString('en')} pictures`, () => {
  beforeAll(async () => {
    // Pictures among as many other files, one a minute back from now; bob was given every tenth.
    await gw.db.pool.query(
      `INSERT INTO "File" ("instanceId", "fileId", "name", "source", "tags", "status", "size", "thumbnail", "width", "height",
         "takenAt", "uploaderId", "dateCreated", "lastUpdated", "createdAt")
       SELECT $1::uuid, 'seed' || i || CASE WHEN i % 2 = 0 THEN '.jpg' ELSE '.txt' END, 'Seed ' || i, 'camera', '{}', 'Completed', 100,
         i % 2 = 0, 320, 240, CASE WHEN i % 2 = 0 THEN now() - i * interval '1 minute' END, $2::uuid, now(), now(), now()
       FROM generate_series(1, ${PICTURES * 2}) i`,
      [instanceId, alice.userId],
    );
    await gw.db.pool.query(
      `INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable")
       SELECT $1::uuid, 'seed' || i || '.jpg', $2::uuid, true FROM generate_series(20, ${PICTURES * 2}, 20) i`,
      [instanceId, bobId],
    );
    await gw.db.pool.query('VACUUM ANALYZE "File", "FilePermission"');
  }, 120_000);

  /** The statements the repository sends for a page, with their values. */
  async function statements(scope: { all: true } | { userId: string }, cursor?: { takenAt: Date; fileId: string }) {
    const sent: { text: string; values: unknown[] }[] = [];
    const files = new FileRepository(gw.db);
    listenToStatements((text, values) => sent.push({ text, values }));
    try {
      await files.photos(instanceId, scope, cursor, 101);
      if (!cursor) await files.photoCount(instanceId, scope);
    } finally {
      listenToStatements(undefined);
    }
    return sent;
  }

  const planOf = (statement: { text: string; values: unknown[] }) => plan(gw.db.pool, statement);

  it('reads the first page and the count, and a page deep in the timeline, from the photos index', async () => {
    const deep = { takenAt: new Date(Date.now() - PICTURES * 60_000), fileId: `seed${PICTURES}.jpg` };
    const [first, count] = await statements({ all: true });
    const [after] = await statements({ all: true }, deep);
    for (const statement of [first!, after!]) {
      const plan = await planOf(statement);
      expect(plan).toContain('Index Scan on File_photos_idx');
      expect(plan.filter((node) => /^(Seq Scan|Sort|Bitmap)/.test(node))).toEqual([]);
    }
    expect(await planOf(count!)).toContain('Index Only Scan on File_photos_idx');
    // The cursor bounds the scan (an index condition, not a filter): a page deep in the timeline reads a
    // page's rows, not every row before it.
    const scan = (await explain(gw.db.pool, after!, 'ANALYZE, FORMAT JSON')).Plans?.[0];
    expect(scan).toMatchObject({
      'Index Name': 'File_photos_idx',
      'Actual Rows': 101,
      'Index Cond': expect.stringContaining('takenAt'),
    });
    expect(scan?.['Rows Removed by Filter'] ?? 0).toBe(0);
  });

  it('reads another account’s pictures through the photos index', async () => {
    const deep = { takenAt: new Date(Date.now() - PICTURES * 60_000), fileId: 'x' };
    for (const statement of [...(await statements({ userId: bobId })), ...(await statements({ userId: bobId }, deep))]) {
      // Their permissions are few: the planner may hash them, but File is only read through the photos index.
      const plan = await planOf(statement);
      expect(plan).toContainEqual(expect.stringMatching(/ on File_photos_idx$/));
      expect(plan).not.toContain('Seq Scan on File');
    }
  });
});
