// OpenAPI description of the owner's account management (see @pds/http openapi.ts).
import { z } from 'zod';
import type { ApiOperation } from '@pds/http';
import { newUserSchema } from './service';

const userBody = z.object({
  userId: z.uuid(),
  username: z.string(),
  email: z.string().optional(),
  fullName: z.string().optional(),
  kind: z.enum(['owner', 'user', 'application']),
  enabled: z.boolean(),
  createdAt: z.iso.datetime(),
});
const ownerOnly = 'Owner only.';

export const usersApi: ApiOperation[] = [
  {
    method: 'post',
    path: '/users/user',
    tag: 'users',
    auth: 'instanceToken',
    summary: 'Create an account in the instance',
    description: ownerOnly,
    body: newUserSchema,
    responses: { 201: { description: 'The account', body: userBody } },
  },
  {
    method: 'get',
    path: '/users/user',
    tag: 'users',
    auth: 'instanceToken',
    summary: 'List the accounts of the instance',
    description: ownerOnly,
    responses: { 200: { description: 'Every account', body: z.array(userBody) } },
  },
  ...(['disable', 'enable'] as const).map((action): ApiOperation => ({
    method: 'put',
    path: `/users/user/:userId/${action}`,
    tag: 'users',
    auth: 'instanceToken',
    summary: `${action === 'disable' ? 'Disable' : 'Enable'} an account`,
    description: `${ownerOnly} Takes effect on the account's next request.`,
    responses: { 200: { description: 'The account', body: userBody } },
  })),
  {
    method: 'delete',
    path: '/users/user/:userId',
    tag: 'users',
    auth: 'instanceToken',
    summary: 'Delete an account',
    description: ownerOnly,
    responses: { 200: { description: 'Deleted', body: z.object({ message: z.string() }) } },
  },
];
