// The gateway's OpenAPI document: every feature's operation list (its `api.ts`), joined here.
// A route added without its description fails apps/gateway/test/openapi.test.ts.
import { healthApi, openApiDocument, openApiOperation, type ApiOperation } from '@pds/http';
import { applicationsApi } from './apps/api';
import { authApi } from './auth/api';
import { blobsApi } from './blobs/api';
import { dataApi } from './data/api';
import { debitApi } from './data/debit-api';
import { filesApi } from './files/api';
import { signupApi } from './signup/api';
import { usersApi } from './users/api';

export const gatewayOperations: readonly ApiOperation[] = [
  openApiOperation,
  ...healthApi,
  ...signupApi,
  ...authApi,
  ...usersApi,
  ...blobsApi,
  ...filesApi,
  ...applicationsApi,
  ...dataApi,
  ...debitApi,
];

let built: Record<string, unknown> | undefined;

/** Built once per process: every app instance (tests make many) serves the same document. */
export function gatewayOpenApi(): Record<string, unknown> {
  return (built ??= openApiDocument(
    {
      title: 'PDS gateway',
      version: '2.6',
      description:
        'Every instance of the cluster answers on its own address, `<username>.<cluster domain>`; the instance is chosen by the Host header. ' +
        'Errors are `{error, message}` with the matching 4xx/5xx status.',
    },
    gatewayOperations,
  ));
}
