export * from './registry';
export * from './instances';
export * from './apps';
export * from './keys';
export * from './gateway-dex-state';
export type { RegisteredInstance, AppPush, DexKey, InstanceState } from '../generated/dex/client';
