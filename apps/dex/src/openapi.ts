// Dex's OpenAPI document: each feature's operation list (its `api.ts`), joined here.
// A route added without its description fails apps/dex/test/openapi.test.ts.
import { healthApi, openApiDocument, openApiOperation, type ApiOperation } from '@pds/http';
import { appsApi } from './apps/api';
import { registrationApi } from './registration/api';

export const dexOperations: readonly ApiOperation[] = [
  openApiOperation,
  ...healthApi,
  {
    method: 'get',
    path: '/publickey',
    tag: 'meta',
    auth: 'none',
    summary: "Dex's RSA public key (PEM) that verifies its app-push tokens",
    responses: { 200: { description: 'PEM', contentType: 'text/plain' } },
  },
  ...registrationApi,
  ...appsApi,
];

let built: Record<string, unknown> | undefined;

/** Built once per process: every app instance (tests make many) serves the same document. */
export function dexOpenApi(): Record<string, unknown> {
  return (built ??= openApiDocument(
    {
      title: 'PDS dex',
      version: '3',
      description: 'The exchange: instance registration and certified applications. Errors are `{error, message}`.',
    },
    dexOperations,
  ));
}
