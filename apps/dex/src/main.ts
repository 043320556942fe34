import { loadConfig } from '@pds/config';
import { startDex } from './server';

startDex(loadConfig()).then(
  (dex) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void dex.close());
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
