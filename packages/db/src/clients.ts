import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient as GatewayPrismaClient } from './generated/gateway/client';
import { PrismaClient as DexPrismaClient } from './generated/dex/client';

export type GatewayDb = GatewayPrismaClient;
export type DexDb = DexPrismaClient;

export interface PoolOptions {
  /** Connections in this process's pool (a URL's connection_limit is ignored by driver adapters). */
  max?: number;
}

export function createGatewayDb(url: string, options: PoolOptions = {}): GatewayDb {
  return new GatewayPrismaClient({ adapter: new PrismaPg({ connectionString: url, max: options.max ?? 10 }) });
}

export function createDexDb(url: string, options: PoolOptions = {}): DexDb {
  return new DexPrismaClient({ adapter: new PrismaPg({ connectionString: url, max: options.max ?? 5 }) });
}
