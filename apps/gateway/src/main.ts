import { loadConfigFor } from '@pds/config';
import { startGateway } from './server';

startGateway(loadConfigFor('gateway')).then(
  (gateway) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void gateway.close());
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
