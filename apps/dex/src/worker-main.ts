import { loadConfig } from '@pds/config';
import { startDexWorker } from './worker';

startDexWorker(loadConfig()).then(
  (worker) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void worker.close());
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
