export { createApp, type GatewayDeps, type Gateway } from './app';
export { startGateway, type RunningGateway } from './server';
export type { Clock } from '@pds/tokens';
export { gatewayOpenApi } from './openapi';
export { adminOpenApi } from './admin/openapi';
export type { Access, GatewayRoute } from './route';
export { startGatewayWorker } from './worker';
