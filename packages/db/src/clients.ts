import pg from 'pg';

/**
 * A database as the repositories see it: one pg pool, which every statement goes through
 * (packages/db/src/sql.ts). `database` keeps a dex pool from being handed to a gateway repository.
 */
export interface Database<Name extends 'gateway' | 'dex'> {
  readonly database: Name;
  readonly pool: pg.Pool;
  /** Ends the pool (named as callers knew it from the Prisma client this replaced). */
  $disconnect(): Promise<void>;
}

export type GatewayDb = Database<'gateway'>;
export type DexDb = Database<'dex'>;

export interface PoolOptions {
  /** Connections in this process's pool. */
  max?: number;
}

function open<Name extends 'gateway' | 'dex'>(database: Name, url: string, max: number): Database<Name> {
  const pool = new pg.Pool({ connectionString: url, max });
  // A connection that dies while idle leaves the pool; the next query opens a new one. Without a
  // listener the 'error' event would end the process.
  pool.on('error', () => undefined);
  return {
    database,
    pool,
    $disconnect: async () => {
      if (!pool.ending) await pool.end();
    },
  };
}

export function createGatewayDb(url: string, options: PoolOptions = {}): GatewayDb {
  return open('gateway', url, options.max ?? 10);
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
