// Template databases: migrated once per set of migration files, then copied for each test file
// (CREATE DATABASE … TEMPLATE takes ~100 ms, far less than migrating). On a Citus coordinator the
// gateway's template is a distributed database, built and copied on every node (./citus.ts).
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { withDatabase } from '../../scripts/lib/postgres';
import { migrate, type Target } from '../../scripts/lib/prisma';
import { adminClient, citusCluster, onEveryNode, registerNodes, seal, sqlStatements, type CitusCluster } from './citus';

const root = path.resolve(__dirname, '../..');
const LOCK_ID = 7_402_118; // advisory lock shared by every test process that creates databases
const DISTRIBUTE = path.join(root, 'prisma/citus/distribute.sql');
/**
 * Shards per distributed table in the test databases: each copy of the template copies every shard on every
 * worker, ~10 s at Citus's default of 32 on a loaded two-core machine. Still several per worker, so an
 * instance's rows and another's land on different shards as in production.
 */
const SHARD_COUNT = Number(process.env.TEST_CITUS_SHARD_COUNT ?? 4);

function migrationsHash(target: Target, cluster: CitusCluster | undefined): string {
  const dir = path.join(root, 'prisma', target, 'migrations');
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).sort()) {
    const file = path.join(dir, name, 'migration.sql');
    hash.update(name);
    try {
      hash.update(readFileSync(file));
    } catch {
      // migration_lock.toml and other non-folders
    }
  }
  // A distributed template holds the recipe's result and the workers and shard count it was made with.
  if (cluster && target === 'gateway') hash.update(readFileSync(DISTRIBUTE)).update(JSON.stringify([cluster.workers, SHARD_COUNT]));
  return hash.digest('hex').slice(0, 12);
}

async function withLock<T>(adminUrl: string, work: (client: pg.Client, cluster: CitusCluster | undefined) => Promise<T>): Promise<T> {
  const cluster = await citusCluster(adminUrl);
  const client = await adminClient(adminUrl, !!cluster);
  try {
    await client.query('select pg_advisory_lock($1)', [LOCK_ID]);
    return await work(client, cluster);
  } finally {
    await client.query('select pg_advisory_unlock($1)', [LOCK_ID]).catch(() => undefined);
    await client.end();
  }
}

/** The name of a migrated template database for this target, created if missing. */
export async function ensureTemplate(adminUrl: string, target: Target): Promise<string> {
  return withLock(adminUrl, async (client, cluster) => {
    const name = `pds_tpl_${target}_${migrationsHash(target, cluster)}`;
    if (cluster && target === 'gateway') return ensureDistributedTemplate(cluster, name);
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount) return name;
    const building = `${name}_building`;
    await client.query(`drop database if exists ${pg.escapeIdentifier(building)} with (force)`);
    await client.query(`create database ${pg.escapeIdentifier(building)}`);
    await migrate(target, withDatabase(adminUrl, building));
    await client.query(`alter database ${pg.escapeIdentifier(building)} rename to ${pg.escapeIdentifier(name)}`);
    return name;
  });
}

/** As docs/deploy.md moves a database to Citus: on every node, the extension, the workers, migrations, distribute.sql. */
async function ensureDistributedTemplate(cluster: CitusCluster, name: string): Promise<string> {
  let complete = true;
  await onEveryNode(cluster, async (client) => {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    complete &&= rowCount === 1;
  });
  if (complete) return name;
  const building = `${name}_building`;
  await onEveryNode(cluster, async (client) => {
    for (const database of [building, name]) await client.query(`drop database if exists ${pg.escapeIdentifier(database)} with (force)`);
    await client.query(`create database ${pg.escapeIdentifier(building)}`);
  });
  await registerNodes(cluster, (url) => withDatabase(url, building));
  const url = withDatabase(cluster.coordinatorUrl, building);
  await migrate('gateway', url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`set citus.shard_count = ${SHARD_COUNT}`);
    for (const statement of sqlStatements(readFileSync(DISTRIBUTE, 'utf8'))) await client.query(statement);
  } finally {
    await client.end();
  }
  await seal(cluster, building);
  await onEveryNode(cluster, (c) => c.query(`alter database ${pg.escapeIdentifier(building)} rename to ${pg.escapeIdentifier(name)}`));
  return name;
}

/** A fresh database copied from the template; `drop` removes it. */
export async function createDatabaseFrom(adminUrl: string, template: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `pds_test_${randomBytes(6).toString('hex')}`;
  const create = (client: pg.Client) =>
    client.query(`create database ${pg.escapeIdentifier(name)} template ${pg.escapeIdentifier(template)}`);
  const drop = async (client: pg.Client) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
      } catch (error) {
        // 55006: on Citus, a maintenance daemon that was still starting connected after FORCE closed the others.
        if ((error as { code?: string }).code !== '55006' || attempt === 5) throw error;
      }
    }
  };
  const distributed = await withLock(adminUrl, async (client, cluster) => {
    if (cluster && (await isDistributed(cluster, template))) {
      await onEveryNode(cluster, create);
      return cluster;
    }
    await create(client);
    return undefined;
  });
  return {
    url: withDatabase(adminUrl, name),
    // The coordinator first: dropping it there stops its maintenance daemon and its connections to the workers.
    drop: async () => {
      if (distributed) return onEveryNode(distributed, drop);
      const client = await adminClient(adminUrl, false);
      try {
        await drop(client);
      } finally {
        await client.end();
      }
    },
  };
}

/** Whether a template is a distributed one, i.e. also on the workers (the dex template is the coordinator's alone). */
async function isDistributed(cluster: CitusCluster, template: string): Promise<boolean> {
  const client = await adminClient(cluster.workerUrls[0] ?? cluster.coordinatorUrl, true);
  try {
    return (await client.query('select 1 from pg_database where datname = $1', [template])).rowCount === 1;
  } finally {
    await client.end();
  }
}
