export * from './errors';
export * from './validate';
export * from './logger';
export * from './middleware';
export * from './outgoing';
export * from './lifecycle';
export * from './health';
export * from './metrics';
