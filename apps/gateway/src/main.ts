// `node dist/main.js`: the gateway, configured by the environment; GATEWAY_WORKERS > 1 makes this process
// the primary of that many gateway processes (see cluster.ts).
import cluster from 'node:cluster';
import { configOrExit } from '@pds/config';
import { createLogger, runProcess, setHeapGrowth, startClusterMetrics } from '@pds/runtime';
import { servesRequests, superviseGatewayWorkers, tellPrimary } from './cluster';
import { startGateway } from './server';

// Every long-running process sets the V8 heap's growth itself (see @pds/runtime heap.ts for why).
setHeapGrowth();

const config = configOrExit('gateway');
const log = createLogger({ level: config.LOG_LEVEL, name: 'gateway' });
if (servesRequests(config.GATEWAY_WORKERS)) {
  runProcess(() => startGateway(config), {
    repeatSignalExits: !cluster.isWorker,
    log,
    ...(cluster.isWorker ? { onStartFailure: tellPrimary } : {}),
  });
} else {
  superviseGatewayWorkers(config.GATEWAY_WORKERS, config.SHUTDOWN_TIMEOUT * 1000, log);
  startClusterMetrics(config).catch((error: unknown) => {
    console.error(`METRICS_PORT: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
