export * from './blob-store';
