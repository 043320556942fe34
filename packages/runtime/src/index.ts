export * from './logger';
export * from './lifecycle';
export * from './heap';
export * from './metrics';
export * from './client-errors';
export * from './outgoing';
export * from './readiness';
