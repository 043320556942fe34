export * from './clients';
export * from './instances';
export * from './users';
export type { Instance, User, UserKind, DexState } from './generated/gateway/client';
export { Prisma as GatewayPrisma } from './generated/gateway/client';
export { Prisma as DexPrisma } from './generated/dex/client';
