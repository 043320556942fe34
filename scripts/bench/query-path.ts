// The run-time query path measured both ways issue 25 names: the repositories' pg helpers (named
// prepared statements, packages/db/src/sql.ts) against a typed SQL builder (Kysely) sending the same
// query, and, to tell the builder's cost from the statement's, pg sending Kysely's own text unnamed.
// Reports this process's CPU per query (what a gateway pays; PostgreSQL's side is the same work) and the
// wall time, for a file get (the file with its permissions) and a one-record insert, in interleaved rounds.
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx --conditions=@pds/source scripts/bench/query-path.ts [N]
// A scratch database is created, migrated, seeded and dropped.
import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect, type Generated } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import pg from 'pg';
import { createGatewayDb, DataRecordRepository, FileRepository, InstanceRepository, recordJson, SYSTEM, type GatewayDb } from '@pds/db';
import { dropDatabase, ensureDatabase } from '../lib/postgres';
import { migrate } from '../lib/prisma';
import { seedFiles } from './seed';

const FILES = 1_000;
const IN_FLIGHT = 4;
const ROUNDS = 3;

/** The columns Kysely's queries name (the types Prisma generates are for Prisma's client). */
interface Tables {
  File: {
    instanceId: string;
    fileId: string;
    name: string;
    source: string;
    tags: string[];
    title: string | null;
    description: string | null;
    status: string;
    size: string | null;
    contentPublic: boolean;
    uploaderId: string;
    dateCreated: Date;
    lastUpdated: Date;
    createdAt: Date;
  };
  FilePermission: { instanceId: string; fileId: string; userId: string; contentReadable: boolean };
  DataRecord: {
    instanceId: string;
    recordId: string;
    namespace: string;
    endpoint: string;
    data: string;
    bytes: number;
    userId: string | null;
    createdAt: Date;
    seq: Generated<string>;
  };
}

type Builder = Kysely<Tables>;
/** One query of a variant; `i` picks the row. */
type Query = (i: number) => Promise<unknown>;

function kyselyFileGet(k: Builder, instanceId: string, fileId: string) {
  return k
    .selectFrom('File as f')
    .select((eb) => [
      'f.instanceId',
      'f.fileId',
      'f.name',
      'f.source',
      'f.tags',
      'f.title',
      'f.description',
      'f.status',
      'f.size',
      'f.contentPublic',
      'f.uploaderId',
      'f.dateCreated',
      'f.lastUpdated',
      'f.createdAt',
      jsonArrayFrom(
        eb
          .selectFrom('FilePermission as p')
          .select(['p.userId', 'p.contentReadable'])
          .whereRef('p.instanceId', '=', 'f.instanceId')
          .whereRef('p.fileId', '=', 'f.fileId')
          .orderBy('p.userId'),
      ).as('permissions'),
    ])
    .where('f.instanceId', '=', instanceId)
    .where('f.fileId', '=', fileId);
}

function kyselyInsert(k: Builder, instanceId: string, userId: string, n: number) {
  return k
    .insertInto('DataRecord')
    .values({
      instanceId,
      recordId: randomUUID(),
      namespace: 'bench',
      endpoint: 'items',
      data: JSON.stringify({ n }),
      bytes: Buffer.byteLength(JSON.stringify({ n })),
      userId,
      createdAt: new Date(),
    })
    .returning(['recordId', 'data']);
}

/** CPU and wall microseconds per query over `n` queries, `IN_FLIGHT` at a time. */
async function measure(n: number, query: Query): Promise<{ cpu: number; wall: number }> {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < n) await query(next++);
    }),
  );
  const used = process.cpuUsage(cpu);
  return { cpu: (used.user + used.system) / n, wall: Number(process.hrtime.bigint() - started) / 1000 / n };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) throw new Error('DATABASE_URL: is required (a server where a scratch database may be created)');
  const n = Number(process.argv[2] ?? 20_000);
  const name = `pds_query_path_${process.pid}`;
  const url = await ensureDatabase(adminUrl, name);
  let db: GatewayDb | undefined;
  let k: Builder | undefined;
  try {
    await migrate('gateway', url);
    db = createGatewayDb(url, { max: IN_FLIGHT });
    const created = await new InstanceRepository(db).createWithOwner({
      address: 'bench.pds.test',
      publicKeyPem: 'pem',
      privateKeyEnc: 'sealed',
      keyId: 'k1',
      owner: { username: 'owner', email: 'owner@example.com', fullName: 'Owner', passwordHash: 'hash' },
    });
    if (!created) throw new Error('seeding the instance failed');
    const instanceId = created.instance.id;
    const ownerId = created.owner.id;
    const seed = new pg.Client({ connectionString: url });
    await seed.connect();
    try {
      await seedFiles(seed, { ...created.instance, ownerId }, FILES);
      await seed.query(
        `INSERT INTO "FilePermission" ("instanceId", "fileId", "userId", "contentReadable") SELECT "instanceId", "fileId", $1, true FROM "File"`,
        [ownerId],
      );
    } finally {
      await seed.end();
    }
    // Its own pool of the same size: Kysely's dialect ends the pool it is given.
    k = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: IN_FLIGHT }) }) });
    const builder = k;
    const files = new FileRepository(db);
    const records = new DataRecordRepository(db);
    const fileId = (i: number) => `bench${(i % FILES) + 1}.txt`;
    const pool = db.pool;
    // Kysely's text compiled once, sent with each query's values (in the order of its placeholders): the statement without the builder.
    const unnamed = (compiled: { sql: string; parameters: readonly unknown[] }, values: (i: number) => unknown[]): Query => {
      if (values(0).length !== compiled.parameters.length) throw new Error(`not the values of ${compiled.sql}`);
      return (i) => pool.query(compiled.sql, values(i));
    };
    const insertValues = (i: number) => {
      const data = JSON.stringify({ n: i });
      return [instanceId, randomUUID(), 'bench', 'items', data, Buffer.byteLength(data), ownerId, new Date()];
    };
    const sampleInsert = kyselyInsert(builder, instanceId, ownerId, 0).compile();

    const variants: Record<string, Record<string, Query>> = {
      'file get': {
        'pg helpers (prepared)': (i) => files.find(instanceId, fileId(i)),
        "pg, Kysely's text unnamed": unnamed(kyselyFileGet(builder, instanceId, fileId(0)).compile(), (i) => [instanceId, fileId(i)]),
        Kysely: (i) => kyselyFileGet(builder, instanceId, fileId(i)).executeTakeFirst(),
      },
      'record insert': {
        'pg helpers (prepared)': (i) => records.insert(instanceId, ownerId, 'bench', 'items', [recordJson({ n: i })], SYSTEM),
        "pg, Kysely's text unnamed": unnamed(sampleInsert, insertValues),
        Kysely: (i) => kyselyInsert(builder, instanceId, ownerId, i).execute(),
      },
    };

    const results = new Map<string, { cpu: number[]; wall: number[] }>();
    for (const queries of Object.values(variants)) for (const query of Object.values(queries)) await measure(2_000, query);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [operation, queries] of Object.entries(variants)) {
        for (const [variant, query] of Object.entries(queries)) {
          const { cpu, wall } = await measure(n, query);
          const key = `${operation} | ${variant}`;
          const entry = results.get(key) ?? { cpu: [], wall: [] };
          entry.cpu.push(cpu);
          entry.wall.push(wall);
          results.set(key, entry);
        }
      }
    }
    console.log(`\nN = ${n} per variant and round, ${IN_FLIGHT} in flight, median of ${ROUNDS} interleaved rounds (µs per query)\n`);
    console.log('| query | path | CPU | wall |');
    console.log('| --- | --- | ---: | ---: |');
    for (const [key, { cpu, wall }] of results) {
      console.log(`| ${key} | ${median(cpu).toFixed(1)} | ${median(wall).toFixed(1)} |`);
    }
  } finally {
    await k?.destroy();
    await db?.$disconnect();
    await dropDatabase(adminUrl, name);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
