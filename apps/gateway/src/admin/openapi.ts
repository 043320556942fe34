// The admin API's OpenAPI document (docs/openapi-admin.json), made from its route table.
import { openApiDocument } from '@pds/http';
import { describeAdminAccess } from './route';
import { adminRoutes } from './routes';

let built: Record<string, unknown> | undefined;

/** Built once per process, from the declarations alone (their handlers are never called). */
export function adminOpenApi(): Record<string, unknown> {
  const nothing = new Proxy({}, { get: () => undefined }) as never;
  return (built ??= openApiDocument(
    {
      title: 'PDS admin API',
      version: '1',
      description:
        "The operator's API, served on its own listener (ADMIN_PORT on BIND_ADDRESS), never on the public port. " +
        'Errors are `{error, message}` with the matching 4xx/5xx status.',
    },
    adminRoutes(nothing, adminOpenApi),
    describeAdminAccess,
  ));
}
