// `node dist/worker.js`: dex's job worker (key fetch, app push).
import { loadConfigFor } from '@pds/config';
import { runProcess } from '@pds/http';
import { startDexWorker } from './worker';

runProcess(() => startDexWorker(loadConfigFor('dex-worker')));
