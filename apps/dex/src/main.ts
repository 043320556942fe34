// `node dist/main.js`: one dex process, configured by the environment.
import { loadConfigFor } from '@pds/config';
import { runProcess } from '@pds/http';
import { startDex } from './server';

runProcess(() => startDex(loadConfigFor('dex')));
