import { loadConfigFor } from '@pds/config';
import { startDex } from './server';

startDex(loadConfigFor('dex')).then(
  (dex) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void dex.close());
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
