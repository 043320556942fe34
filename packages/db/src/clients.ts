import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
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

export function createGatewayDb(url: string, options: PoolOptions = {}): GatewayDb {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 });
  // A connection that dies while idle leaves the pool; the next query opens a new one. Without a
  // listener the 'error' event would end the process.
  pool.on('error', () => undefined);
  const client = new GatewayPrismaClient({ adapter: new PrismaPg(pool) });
  // `$disconnect()` also ends the pool (Prisma would not when it never connected), so callers keep
  // closing the database the one way they know.
  const disconnect = client.$disconnect.bind(client);
  return Object.assign(client, {
    pool,
    $disconnect: async () => {
      await disconnect();
      if (!pool.ended) await pool.end();
    },
  });
}

export function createDexDb(url: string, options: PoolOptions = {}): DexDb {
  return new DexPrismaClient({ adapter: new PrismaPg({ connectionString: url, max: options.max ?? 5 }) });
}
