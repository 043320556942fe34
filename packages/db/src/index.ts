export * from './clients';
export * from './instances';
export * from './users';
export * from './applications';
export * from './data';
export type { Application, DataAccess, DataGrant } from './generated/gateway/client';
export type { Instance, User, UserKind, DexState } from './generated/gateway/client';
export { Prisma as GatewayPrisma } from './generated/gateway/client';
export { Prisma as DexPrisma } from './generated/dex/client';
