// `node dist/main.js`: the gateway, configured by the environment; GATEWAY_WORKERS > 1 makes this process
// the primary of that many gateway processes (see cluster.ts).
import cluster from 'node:cluster';
import { loadConfigFor } from '@pds/config';
import { runProcess, startClusterMetrics } from '@pds/http';
import { servesRequests, superviseGatewayWorkers } from './cluster';
import { startGateway } from './server';

const config = loadConfigFor('gateway');
if (servesRequests(config.GATEWAY_WORKERS)) {
  runProcess(() => startGateway(config), { repeatSignalExits: !cluster.isWorker });
} else {
  superviseGatewayWorkers(config.GATEWAY_WORKERS, config.SHUTDOWN_TIMEOUT * 1000);
  startClusterMetrics(config).catch((error: unknown) => {
    console.error(`METRICS_PORT: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
