// `node dist/worker.js`: dex's job worker (key fetch, app push).
import { configOrExit } from '@pds/config';
import { createLogger, runProcess } from '@pds/http';
import { startDexWorker } from './worker';

const config = configOrExit('dex-worker');
runProcess(() => startDexWorker(config), { log: createLogger({ level: config.LOG_LEVEL, name: 'dex-worker' }) });
