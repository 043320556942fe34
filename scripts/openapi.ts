// `pnpm openapi`: writes the gateway's and dex's OpenAPI documents into docs/, generated from the
// same zod schemas that validate requests. apps/*/test/openapi.test.ts fails when they are stale.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dexOpenApi } from '@pds/dex';
import { adminOpenApi, gatewayOpenApi } from '@pds/gateway';

export const OPENAPI_FILES = {
  gateway: join(__dirname, '..', 'docs', 'openapi.json'),
  dex: join(__dirname, '..', 'docs', 'openapi-dex.json'),
  admin: join(__dirname, '..', 'docs', 'openapi-admin.json'),
};

export const serialise = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`;

if (require.main === module) {
  writeFileSync(OPENAPI_FILES.gateway, serialise(gatewayOpenApi()));
  writeFileSync(OPENAPI_FILES.dex, serialise(dexOpenApi()));
  writeFileSync(OPENAPI_FILES.admin, serialise(adminOpenApi()));
  console.log(`wrote ${OPENAPI_FILES.gateway}, ${OPENAPI_FILES.dex} and ${OPENAPI_FILES.admin}`);
}
