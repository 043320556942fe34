import pg from 'pg';

/**
 * A database as the repositories see it: one pg pool, which every statement goes through
 * (packages/db/src/sql.ts). `database` keeps a dex pool from being handed to a gateway repository.
 */
export interface Database<Name extends 'gateway' | 'dex'> {
  readonly database: Name;
  readonly pool: pg.Pool;
  /** A streaming replica's pool (DATABASE_REPLICA_URL) for the reads ReadRouting lets go there. */
  readonly replica?: pg.Pool;
  /** Ends the pools (named as callers knew it from the Prisma client this replaced). */
  $disconnect(): Promise<void>;
}

export type GatewayDb = Database<'gateway'>;
export type DexDb = Database<'dex'>;

export interface PoolOptions {
  /** Connections in this process's pool (and in the replica's, when there is one). */
  max?: number;
}

function poolOf(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  // A connection that dies while idle leaves the pool; the next query opens a new one. Without a
  // listener the 'error' event would end the process.
  pool.on('error', () => undefined);
  // A connection that dies while a statement or a transaction holds it fails that statement; pg then
  // also emits 'error' on the client, which without a listener of its own would end the process.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

async function end(pool: pg.Pool | undefined): Promise<void> {
  if (pool && !pool.ending) await pool.end();
}

function open<Name extends 'gateway' | 'dex'>(database: Name, url: string, max: number, replicaUrl?: string): Database<Name> {
  const pool = poolOf(url, max);
  const replica = replicaUrl ? poolOf(replicaUrl, max) : undefined;
  return {
    database,
    pool,
    replica,
    $disconnect: async () => {
      await Promise.all([end(pool), end(replica)]);
    },
  };
}

export function createGatewayDb(url: string, options: PoolOptions & { replicaUrl?: string } = {}): GatewayDb {
  return open('gateway', url, options.max ?? 10, options.replicaUrl);
}

export function createDexDb(url: string, options: PoolOptions = {}): DexDb {
  return open('dex', url, options.max ?? 5);
}

/** Awaits `work`; when it fails, closes the pool before passing the error on. */
export async function disconnectOnFailure<T>(db: GatewayDb | DexDb, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    await db.$disconnect();
    throw error;
  }
}

/** Connections of a database's pool: open in total, idle, and callers waiting for one. */
export function poolUse(db: GatewayDb | DexDb): { total: number; idle: number; waiting: number } {
  return { total: db.pool.totalCount, idle: db.pool.idleCount, waiting: db.pool.waitingCount };
}
