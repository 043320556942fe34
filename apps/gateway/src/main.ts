import { loadConfig } from '@pds/config';
import { startGateway } from './server';

startGateway(loadConfig()).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
