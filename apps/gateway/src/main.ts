// `node dist/main.js`: one gateway process, configured by the environment.
import { loadConfigFor } from '@pds/config';
import { runProcess } from '@pds/http';
import { startGateway } from './server';

runProcess(() => startGateway(loadConfigFor('gateway')));
