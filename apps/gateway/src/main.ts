import cluster from 'node:cluster';
import { loadConfig } from '@pds/config';
import { servesRequests, superviseGatewayWorkers } from './cluster';
import { startGateway } from './server';

const config = loadConfig();
if (!servesRequests(config.GATEWAY_WORKERS)) {
  superviseGatewayWorkers(config.GATEWAY_WORKERS);
} else {
  startGateway(config).then(
    (gateway) => {
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        // A forked worker leaves once it has stopped: its channel to the primary would keep it alive.
        process.once(signal, () => void gateway.close().then(() => cluster.worker?.disconnect()));
      }
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
