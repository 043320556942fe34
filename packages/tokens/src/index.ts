export * from './keys';
export * from './jwt';
export * from './cache';
