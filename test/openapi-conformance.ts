// Every response the suite receives through supertest is checked against the OpenAPI documents
// (gateway's, then dex's, then the admin API's): a documented operation answering a body its document does not describe
// fails the test file. Responses of undocumented paths (fake servers, S3) are not this check's business.
import type { Response } from 'supertest';
import { Test } from 'supertest';

type Checker = (res: Response) => string[];
let checkers: Checker[] | undefined;
const problems: string[] = [];

// Built on the first response, so test files that never call an app do not load the apps.
function documents(): Checker[] {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { responseChecker } = require('./support/openapi') as typeof import('./support/openapi');
  const { adminOpenApi, gatewayOpenApi } = require('@pds/gateway') as typeof import('@pds/gateway');
  const { dexOpenApi } = require('@pds/dex') as typeof import('@pds/dex');
  /* eslint-enable @typescript-eslint/no-require-imports */
  return [gatewayOpenApi(), dexOpenApi(), adminOpenApi()].map((doc) => responseChecker(doc as Parameters<typeof responseChecker>[0]));
}

function record(res: Response): void {
  checkers ??= documents();
  for (const check of checkers) {
    const found = check(res);
    // The first document that describes the operation decides.
    if (found.some((p) => p.endsWith(': no documented operation'))) continue;
    problems.push(...found);
    return;
  }
}

type Assert = (this: Test, error: Error | null, res: Response | undefined, fn: unknown) => void;
const prototype = Test.prototype as unknown as { assert: Assert };
const assert = prototype.assert;
prototype.assert = function (error, res, fn) {
  if (res?.status) record(res);
  return assert.call(this, error, res, fn);
};

afterAll(() => {
  if (problems.length > 0)
    throw new Error(
      `responses that differ from the OpenAPI documents (fix the route's declaration or its handler):\n${[...new Set(problems)].join('\n')}`,
    );
});
