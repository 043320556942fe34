// The gateway's OpenAPI document, made from its route table (see @pds/http openapi.ts).
import { openApiDocument } from '@pds/http';
import { describeAccess } from './route';
import { declaredRoutes } from './routes';

let built: Record<string, unknown> | undefined;

/** Built once per process, from the declarations alone. */
export function gatewayOpenApi(): Record<string, unknown> {
  return (built ??= openApiDocument(
    {
      title: 'PDS gateway',
      version: '2.6',
      description:
        'Every instance of the cluster answers on its own address, `<username>.<cluster domain>`; the instance is chosen by the Host header. ' +
        'Errors are `{error, message}` with the matching 4xx/5xx status.',
    },
    declaredRoutes(),
    describeAccess,
  ));
}
