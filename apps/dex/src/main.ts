// `node dist/main.js`: one dex process, configured by the environment.
import { configOrExit } from '@pds/config';
import { createLogger, runProcess } from '@pds/http';
import { startDex } from './server';

const config = configOrExit('dex');
runProcess(() => startDex(config), { log: createLogger({ level: config.LOG_LEVEL, name: 'dex' }) });
