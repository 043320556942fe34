// Tests assert on what the product stored through Prisma's typed client (`gw.db.file.findMany(…)`).
// The product itself never builds one: it speaks pg only (packages/db/src/sql.ts). The client here
// runs on the product's own pool, so a test and the code under test share connections as before.
import { PrismaPg } from '@prisma/adapter-pg';
import { createDexDb, createGatewayDb, type DexDb, type GatewayDb, type PoolOptions } from '@pds/db';
import { PrismaClient as DexPrismaClient } from '../../packages/db/src/generated/dex/client';
import { PrismaClient as GatewayPrismaClient } from '../../packages/db/src/generated/gateway/client';

/** The gateway's database as the product gets it, plus Prisma's models for assertions. */
export type TestGatewayDb = GatewayDb & GatewayPrismaClient;
export type TestDexDb = DexDb & DexPrismaClient;

/** `client` with the product database's fields; its `$disconnect` closes both. */
function withAssertions<D extends GatewayDb | DexDb, C extends { $disconnect(): Promise<void> }>(db: D, client: C): D & C {
  const disconnect = client.$disconnect.bind(client);
  return Object.assign(client, {
    database: db.database,
    pool: db.pool,
    $disconnect: async () => {
      await disconnect();
      await db.$disconnect();
    },
  }) as D & C;
}

export function testGatewayDb(url: string, options?: PoolOptions): TestGatewayDb {
  const db = createGatewayDb(url, options);
  return withAssertions(db, new GatewayPrismaClient({ adapter: new PrismaPg(db.pool) }));
}

export function testDexDb(url: string, options?: PoolOptions): TestDexDb {
  const db = createDexDb(url, options);
  return withAssertions(db, new DexPrismaClient({ adapter: new PrismaPg(db.pool) }));
}
