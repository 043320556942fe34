export * from './errors';
export * from './validate';
export * from './logger';
export * from './middleware';
export * from './body';
export * from './strings';
export * from './url';
export * from './client-errors';
