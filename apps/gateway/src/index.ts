export { createApp, type GatewayDeps, type Gateway } from './app';
export { startGateway, type RunningGateway } from './server';
export type { Clock } from '@pds/tokens';
export { gatewayOpenApi, gatewayOperations } from './openapi';
export { startGatewayWorker } from './worker';
