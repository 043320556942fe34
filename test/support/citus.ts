// The suite on a Citus coordinator (docs/deploy.md, "Distributed PostgreSQL (Citus)"): when the admin
// database has the citus extension and workers registered, each test database is a distributed one — a
// database of the same name on the coordinator and on every worker, the gateway's tables distributed by
// distribute.sql. Citus keeps its metadata (pg_dist_*) inside each database and places the shards in the
// workers' databases of the same name, so copying a distributed template means copying it on every node.
import pg from 'pg';

export interface CitusNode {
  host: string;
  port: number;
  /** The coordinator's group is 0. */
  group: number;
}

export interface CitusCluster {
  coordinator?: CitusNode;
  workers: CitusNode[];
  /** The configured admin URL. */
  coordinatorUrl: string;
  /** The workers' admin URLs: the configured URL with each worker's host and port. */
  workerUrls: string[];
}

const clusters = new Map<string, Promise<CitusCluster | undefined>>();

/** The Citus cluster behind `adminUrl`, or undefined for plain PostgreSQL (asked once per process). */
export function citusCluster(adminUrl: string): Promise<CitusCluster | undefined> {
  let cluster = clusters.get(adminUrl);
  if (!cluster) clusters.set(adminUrl, (cluster = readCluster(adminUrl)));
  return cluster;
}

async function readCluster(adminUrl: string): Promise<CitusCluster | undefined> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query(`select 1 from pg_extension where extname = 'citus'`);
    if (!rowCount) return undefined;
    const { rows } = await client.query<{ nodename: string; nodeport: number; groupid: number }>(
      `select nodename, nodeport, groupid from pg_dist_node where noderole = 'primary' and isactive order by groupid, nodeport`,
    );
    const workers = rows.filter((r) => r.groupid !== 0).map((r) => ({ host: r.nodename, port: r.nodeport, group: r.groupid }));
    if (!workers.length) {
      throw new Error(
        `the citus extension is in ${new URL(adminUrl).pathname.slice(1)} but no worker is registered there (citus_add_node)`,
      );
    }
    const coordinatorRow = rows.find((r) => r.groupid === 0);
    const coordinator = coordinatorRow && { host: coordinatorRow.nodename, port: coordinatorRow.nodeport, group: 0 };
    const workerUrl = (node: CitusNode) => {
      const u = new URL(adminUrl);
      u.hostname = node.host;
      u.port = String(node.port);
      return u.toString();
    };
    return { coordinator, workers, coordinatorUrl: adminUrl, workerUrls: workers.map(workerUrl) };
  } finally {
    await client.end();
  }
}

/** Runs `work` with an admin connection to each node: the coordinator's first, then the workers' at once. */
export async function onEveryNode(cluster: CitusCluster, work: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const on = async (url: string) => {
    const client = await adminClient(url, true);
    try {
      await work(client);
    } finally {
      await client.end();
    }
  };
  await on(cluster.coordinatorUrl);
  await Promise.all(cluster.workerUrls.map(on));
}

/**
 * An admin connection; on Citus it creates, copies and drops databases on its own node only: the harness
 * does each node itself, and Citus's propagation takes no TEMPLATE but template1.
 */
export async function adminClient(url: string, citus: boolean): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  if (citus) await client.query('set citus.enable_create_database_propagation = off');
  return client;
}

/** Makes a freshly created database distributed: the extension on every node, the workers registered on the coordinator. */
export async function registerNodes(cluster: CitusCluster, urlOf: (adminUrl: string) => string): Promise<void> {
  for (const adminUrl of [cluster.coordinatorUrl, ...cluster.workerUrls]) {
    const client = new pg.Client({ connectionString: urlOf(adminUrl) });
    await client.connect();
    try {
      await client.query('create extension if not exists citus');
    } finally {
      await client.end();
    }
  }
  const client = new pg.Client({ connectionString: urlOf(cluster.coordinatorUrl) });
  await client.connect();
  try {
    if (cluster.coordinator)
      await client.query('select citus_set_coordinator_host($1, $2)', [cluster.coordinator.host, cluster.coordinator.port]);
    for (const worker of cluster.workers) await client.query('select citus_add_node($1, $2)', [worker.host, worker.port]);
  } finally {
    await client.end();
  }
}

/**
 * Closes every connection to `database` on every node and keeps new ones out, so that it can be copied:
 * Citus's maintenance daemon stays connected to each database that has the extension (and to the
 * workers' databases of that name) and would make CREATE DATABASE … TEMPLATE fail. Nothing starts it
 * again while the database refuses connections.
 */
export async function seal(cluster: CitusCluster, database: string): Promise<void> {
  const name = pg.escapeIdentifier(database);
  await onEveryNode(cluster, (client) => client.query(`alter database ${name} allow_connections false`));
  await onEveryNode(cluster, async (client) => {
    for (let attempt = 0; ; attempt++) {
      const { rows } = await client.query<{ pid: number }>(
        'select pid, pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [database],
      );
      if (!rows.length) return;
      if (attempt === 50) throw new Error(`connections to ${database} did not close: ${rows.map((r) => r.pid).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
}

/**
 * The statements of a SQL file, one by one, as psql sends them: sent as one string they would be one
 * transaction, and Citus will not add foreign keys to tables it distributed in parallel in the same
 * transaction. Splits on `;` outside quotes, dollar quotes and comments.
 */
export function sqlStatements(text: string): string[] {
  const statements: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const rest = text.slice(i);
    const skip = /^--[^\n]*/.exec(rest) ?? /^'(?:[^']|'')*'/.exec(rest) ?? /^"[^"]*"/.exec(rest);
    const dollar = /^\$([A-Za-z_]*)\$/.exec(rest);
    if (skip) i += skip[0].length - 1;
    else if (dollar) i = text.indexOf(dollar[0], i + dollar[0].length) + dollar[0].length - 1;
    else if (text[i] === ';') {
      statements.push(text.slice(start, i + 1).trim());
      start = i + 1;
    }
  }
  if (
    text
      .slice(start)
      .replace(/--[^\n]*/g, '')
      .trim()
  )
    statements.push(text.slice(start).trim());
  return statements;
}
