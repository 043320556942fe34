export { createDexApp, type DexDeps } from './app';
export { startDex, type RunningDex } from './server';
export { loadOrCreateDexKeys } from './keys';
export type { KeyFetchOutcome } from './registration/service';
export { dexOpenApi } from './routes';
export { startDexWorker } from './worker';
