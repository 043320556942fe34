// `node dist/worker.js`: the gateway's job worker (dex registration, upload sweep).
import { loadConfigFor } from '@pds/config';
import { runProcess } from '@pds/http';
import { startGatewayWorker } from './worker';

runProcess(() => startGatewayWorker(loadConfigFor('gateway-worker')));
