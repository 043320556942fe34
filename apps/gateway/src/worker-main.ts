// `node dist/worker.js`: the gateway's job worker (dex registration, upload sweep).
import { configOrExit } from '@pds/config';
import { createLogger, runProcess } from '@pds/http';
import { startGatewayWorker } from './worker';

const config = configOrExit('gateway-worker');
runProcess(() => startGatewayWorker(config), { log: createLogger({ level: config.LOG_LEVEL, name: 'gateway-worker' }) });
