// `node dist/main.js`: one dex process, configured by the environment.
import { configOrExit } from '@pds/config';
import { createLogger, runProcess, setHeapGrowth } from '@pds/runtime';
import { startDex } from './server';

// Every long-running process sets the V8 heap's growth itself (see @pds/runtime heap.ts for why).
setHeapGrowth();

const config = configOrExit('dex');
runProcess(() => startDex(config), { log: createLogger({ level: config.LOG_LEVEL, name: 'dex' }) });
