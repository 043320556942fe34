export * from './errors';
export * from './validate';
export * from './logger';
export * from './middleware';
export * from './access-log';
export * from './security-headers';
export * from './outgoing';
