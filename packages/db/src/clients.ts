import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient as GatewayPrismaClient } from './generated/gateway/client';
import { PrismaClient as DexPrismaClient } from './generated/dex/client';

/**
 * The gateway's Prisma client plus the pg pool under it. Repositories send hot-path reads straight to
 * `pool` as prepared statements (sql.ts) and everything else through Prisma: one pool, one set of
 * connections, whichever way a query goes.
 */
export type GatewayDb = GatewayPrismaClient & { readonly pool: pg.Pool };
export type DexDb = DexPrismaClient;

export interface PoolOptions {
  /** Connections in this process's pool (a URL's connection_limit is ignored by driver adapters). */
  max?: number;
}

/** Each client's connection pool, for the pool-use metrics (the adapter does not expose it). */
const pools = new WeakMap<object, pg.Pool>();

/** A pool the client owns: `$disconnect()` ends it. */
function adapter(url: string, max: number) {
  const pool = new pg.Pool({ connectionString: url, max });
  // A connection that dies while idle leaves the pool; the next query opens a new one. Without a
  // listener the 'error' event would end the process (Prisma adds its own only once it connects).
  pool.on('error', () => undefined);
  return { pool, adapter: new PrismaPg(pool, { disposeExternalPool: true }) };
}

export function createGatewayDb(url: string, options: PoolOptions = {}): GatewayDb {
  const { pool, adapter: a } = adapter(url, options.max ?? 10);
  const client = new GatewayPrismaClient({ adapter: a });
  pools.set(client, pool);
  // Prisma ends the pool only if it ever connected; the hot paths may have used the pool alone.
  const disconnect = client.$disconnect.bind(client);
  return Object.assign(client, {
    pool,
    $disconnect: async () => {
      await disconnect();
      if (!pool.ending) await pool.end();
    },
  });
}

export function createDexDb(url: string, options: PoolOptions = {}): DexDb {
  const { pool, adapter: a } = adapter(url, options.max ?? 5);
  const db = new DexPrismaClient({ adapter: a });
  pools.set(db, pool);
  return db;
}

/** Awaits `work`; when it fails, closes the client (its pool) before passing the error on. */
export async function disconnectOnFailure<T>(db: GatewayDb | DexDb, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    await db.$disconnect();
    throw error;
  }
}

/** Connections of a client's pool: open in total, idle, and callers waiting for one. */
export function poolUse(db: GatewayDb | DexDb): { total: number; idle: number; waiting: number } {
  const pool = pools.get(db);
  return { total: pool?.totalCount ?? 0, idle: pool?.idleCount ?? 0, waiting: pool?.waitingCount ?? 0 };
}
