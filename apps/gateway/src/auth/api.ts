// OpenAPI description of the token routes (see @pds/http openapi.ts).
import { z } from 'zod';
import type { ApiOperation } from '@pds/http';

const tokenBody = z.object({ accessToken: z.string(), userId: z.uuid() });
const credentials = [
  { name: 'username', description: 'Account name (URI-encoded when it holds non-ASCII characters)', required: true },
  { name: 'password', description: 'Password (`pass` is accepted too); URI-encoded when it holds non-ASCII characters', required: true },
];

export const authApi: ApiOperation[] = [
  {
    method: 'get',
    path: ['/users/access_token', '/user/access_token'],
    tag: 'auth',
    auth: 'none',
    summary: 'Log in with username and password headers',
    description: 'Rate limited per client and instance (429 with Retry-After). The token is also in the X-Auth-Token response header.',
    headers: credentials,
    responses: { 200: { description: 'A token for the account', body: tokenBody } },
  },
  {
    method: 'get',
    path: '/users/access_token/validate',
    tag: 'auth',
    auth: 'instanceToken',
    summary: 'Check a token',
    responses: { 200: { description: 'The token is valid', body: z.object({ message: z.literal('Authenticated') }) } },
  },
  {
    method: 'get',
    path: '/',
    tag: 'auth',
    auth: 'none',
    summary: 'Instance root: refresh a token, log in by query, or describe the instance',
    // Read by hand in the route (the original's query forms), so this object only documents them.
    query: z.object({
      access_token: z.string().optional().describe('A token to refresh'),
      username: z.string().optional(),
      pass: z.string().optional(),
      password: z.string().optional(),
    }),
    responses: {
      200: {
        description: 'A (refreshed) token, or the instance description when no credentials are given',
        body: z.union([tokenBody, z.object({ instance: z.string(), apiVersion: z.string(), publicKey: z.string() })]),
      },
    },
  },
  {
    method: 'get',
    path: '/publickey',
    tag: 'auth',
    auth: 'none',
    summary: "The instance's RSA public key (PEM) that verifies its tokens",
    responses: { 200: { description: 'PEM', contentType: 'text/plain' } },
  },
];
