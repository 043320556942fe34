// `node dist/worker.js`: dex's job worker (key fetch, app push).
import { configOrExit } from '@pds/config';
import { createLogger, runProcess, setHeapGrowth } from '@pds/runtime';
import { startDexWorker } from './worker';

// Every long-running process sets the V8 heap's growth itself (see @pds/runtime heap.ts for why).
setHeapGrowth();

const config = configOrExit('dex-worker');
runProcess(() => startDexWorker(config), { log: createLogger({ level: config.LOG_LEVEL, name: 'dex-worker' }) });
