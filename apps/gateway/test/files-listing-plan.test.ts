// The listing's statements on 100,000 files, as PostgreSQL plans them: pages come straight from an
// index in the order asked for, and the totals of a state's files from an index-only scan. No statement
// of the default view reads the table through (a sequential scan), for the owner or for another account,
// beyond the instance's own rows (on Citus, a shard that holds them alone).
import { FileRepository, type GatewayDb, type ListingQuery, type Page } from '@pds/db';
import { addUser, signUp, type TestGateway } from '../../../test/support/gateway';
import { planOf as plan } from '../../../test/support/plan';
import { startFilesGateway } from './files-support';

const FILES = 100_000;
let gw: TestGateway;
let instanceId: string;
let bobId: string;
/** Alice's files are alone in their table where they are read (see `aloneInTheirShard`). */
let alone: boolean;

beforeAll(async () => {
  gw = await startFilesGateway('local');
  const alice = await signUp(gw.app, 'alice');
  bobId = (await addUser(gw.app, alice, 'bob')).userId;
  // Alice's files beside as many of another instance's: the table holds more than one instance, as it does live.
  const zed = await signUp(gw.app, 'zed');
  const idOf = async (address: string) =>
    (await gw.db.pool.query<{ id: string }>(`SELECT "id" FROM "Instance" WHERE "address" = $1`, [address])).rows[0]!.id;
  instanceId = await idOf(alice.address);
  const zedId = await idOf(zed.address);
  for (const [id, uploader] of [
    [instanceId, alice.userId],
    [zedId, zed.userId],
  ])
    await seed(id!, uploader!);
  alone = await aloneInTheirShard(instanceId, zedId);
  await gw.db.pool.query(
    `INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable")
     SELECT $1::uuid, 'photo' || i || '.jpg', $2::uuid, true FROM generate_series(1, ${FILES}, 100) i`,
    [instanceId, bobId],
  );
  // What autovacuum does on a live database: statistics, and the visibility map index-only scans need.
  await gw.db.pool.query('VACUUM ANALYZE "File", "FilePermission"');
}, 300_000);
afterAll(() => gw.close());

/**
 * Whether Alice's files are the only ones where they are read. On plain PostgreSQL never: one table holds
 * both instances'. On Citus, when the two instances hash to different shards, Alice's shard holds her rows
 * alone (a live shard holds thousands of instances; this test's, two): reading it through is reading her files
 * and nobody else's, which the planner rightly prefers to an index for the totals of a view that holds
 * nearly all of them.
 */
async function aloneInTheirShard(id: string, neighbourId: string): Promise<boolean> {
  const citus = await gw.db.pool.query(`SELECT 1 FROM pg_extension WHERE extname = 'citus'`);
  if (!citus.rowCount) return false;
  const { rows } = await gw.db.pool.query<{ shared: boolean }>(
    `SELECT get_shard_id_for_distribution_column('"File"', $1::uuid) = get_shard_id_for_distribution_column('"File"', $2::uuid) AS "shared"`,
    [id, neighbourId],
  );
  return !rows[0]!.shared;
}

/** The nodes that read a table through: any sequential scan, but of Alice's own shard (see `aloneInTheirShard`). */
const throughReads = (plan: string[]) =>
  plan.filter((node) => node.startsWith('Seq Scan') && !(alone && /^Seq Scan on (File|FilePermission)$/.test(node)));

/** Mostly completed photos, some unfinished, each with its uploader's permission. */
async function seed(id: string, uploaderId: string): Promise<void> {
  await gw.db.pool.query(
    `INSERT INTO "File" ("instanceId", "fileId", "name", "source", "tags", "title", "status", "size", "uploaderId",
       "dateCreated", "lastUpdated", "createdAt")
     SELECT $1::uuid, 'photo' || i || '.jpg', 'Photo ' || i || '.jpg', 'camera', ARRAY['tag' || (i % 50)], 'Holiday ' || (i % 365),
       CASE WHEN i % 20 = 0 THEN 'New'::"FileStatus" ELSE 'Completed'::"FileStatus" END,
       CASE WHEN i % 20 = 0 THEN NULL ELSE i * 100 END, $2::uuid,
       now() - i * interval '1 minute', now() - i * interval '1 minute', now() - i * interval '1 minute'
     FROM generate_series(1, ${FILES}) i`,
    [id, uploaderId],
  );
  await gw.db.pool.query(
    `INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable")
     SELECT f."instanceId", f."fileId", f."uploaderId", true FROM "File" f WHERE f."instanceId" = $1::uuid`,
    [id],
  );
}

/** The statements the repository sends for a listing's page and totals, with their values, without running them. */
async function statements(query: ListingQuery, scope: { all: true } | { userId: string }, page: Page = { take: 50, skip: 0 }) {
  const sent: { text: string; values: unknown[] }[] = [];
  const pool = { query: async (config: { text: string; values: unknown[] }) => (sent.push(config), { rows: [], rowCount: 0 }) };
  const recorder = new FileRepository({ pool } as unknown as GatewayDb);
  await recorder.listing(instanceId, query, scope, page);
  await recorder.listingTotals(instanceId, query, scope);
  return sent;
}

/** Every node of the plan PostgreSQL chooses for the statement, as "Node Type on relation/index". */
const planOf = (statement: { text: string; values: unknown[] }) => plan(gw.db.pool, statement);

const DEFAULT_VIEW: ListingQuery = { status: 'Completed', sort: 'date', descending: true };

describe(`a listing of ${FILES.toLocaleString('en')} files`, () => {
  it('pages the owner’s default view from a date index and totals it with an index-only scan', async () => {
    const [page, totals] = await statements(DEFAULT_VIEW, { all: true });
    const pagePlan = await planOf(page!);
    // Search's index (instanceId, lastUpdated, fileId) serves it as well while nearly every file is Completed.
    expect(pagePlan).toContainEqual(expect.stringMatching(/^Index Scan on File_(listing_date|instanceId_lastUpdated_fileId)_idx$/));
    expect(pagePlan.filter((node) => node.startsWith('Seq Scan') || node.startsWith('Sort'))).toEqual([]);
    const totalsPlan = await planOf(totals!);
    if (!alone) expect(totalsPlan).toContain('Index Only Scan on File_listing_size_idx');
    expect(throughReads(totalsPlan)).toEqual([]);
  });

  it('pages each sort either way round without sorting the files', async () => {
    for (const sort of ['name', 'size', 'date'] as const) {
      for (const descending of [false, true]) {
        const [page] = await statements({ ...DEFAULT_VIEW, sort, descending }, { all: true }, { take: 50, skip: 500 });
        const plan = await planOf(page!);
        expect({ sort, descending, plan: plan.filter((node) => /^(Seq Scan|Sort)/.test(node)) }).toEqual({ sort, descending, plan: [] });
        // Search's index (instanceId, lastUpdated, fileId) serves the date sort as well.
        const index = sort === 'date' ? '(listing_date|instanceId_lastUpdated_fileId)' : `listing_${sort}`;
        expect(plan).toContainEqual(expect.stringMatching(new RegExp(`^Index Scan( Backward)? on File_${index}_idx$`)));
      }
    }
  });

  it('finds rare words through the words index', async () => {
    const [page, totals] = await statements({ ...DEFAULT_VIEW, words: 'photo 4242' }, { all: true });
    for (const statement of [page!, totals!]) {
      const plan = await planOf(statement);
      expect(plan).toContain('Bitmap Index Scan on File_words_fts_idx');
      expect(plan.filter((node) => node.startsWith('Seq Scan'))).toEqual([]);
    }
  });

  it('reads another account’s default view through indexes', async () => {
    for (const statement of await statements(DEFAULT_VIEW, { userId: bobId })) {
      expect(throughReads(await planOf(statement))).toEqual([]);
    }
  });
});
