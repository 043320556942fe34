export * from './keys';
export * from './jwt';
export * from './cache';
export * from './service-token';
export * from './clock';
export * from './passwords';
