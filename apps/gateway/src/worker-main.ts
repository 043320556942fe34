// `node dist/worker.js`: the gateway's job worker (dex registration, upload sweep, thumbnails, exports
// and imports, the purge of closed instances).
import { configOrExit } from '@pds/config';
import { createLogger, runProcess, setHeapGrowth } from '@pds/runtime';
import { startGatewayWorker } from './worker';

// Every long-running process sets the V8 heap's growth itself (see @pds/runtime heap.ts for why).
setHeapGrowth();

const config = configOrExit('gateway-worker');
runProcess(() => startGatewayWorker(config), { log: createLogger({ level: config.LOG_LEVEL, name: 'gateway-worker' }) });
