// Owner-only account management: /users/user (as the original system's clients call it).
import { z } from 'zod';
import { json } from '@pds/http';
import { route, type GatewayRoute } from '../route';
import { newUserSchema, userUpdateSchema, userView, type UserService } from './service';

const userBody = z.object({
  userId: z.uuid(),
  username: z.string(),
  email: z.string().optional(),
  fullName: z.string().optional(),
  kind: z.enum(['owner', 'user', 'application']),
  enabled: z.boolean(),
  createdAt: z.iso.datetime(),
});
const userParams = z.object({ userId: z.string() });
const tag = 'users';

export function userRoutes(users: UserService): GatewayRoute[] {
  return [
    route({
      method: 'post',
      path: '/users/user',
      access: 'owner',
      tag,
      summary: 'Create an account in the instance',
      body: newUserSchema,
      responses: { 201: { description: 'The account', body: userBody } },
      handle: async ({ tenant, caller, body }) => json(userView(await users.create(tenant, caller, body)), 201),
    }),
    route({
      method: 'get',
      path: '/users/user',
      access: 'owner',
      tag,
      summary: 'List the accounts of the instance',
      responses: { 200: { description: 'Every account', body: z.array(userBody) } },
      handle: async ({ tenant, caller }) => json((await users.list(tenant, caller)).map(userView)),
    }),
    ...(['disable', 'enable'] as const).map((action) =>
      route({
        method: 'put',
        path: `/users/user/:userId/${action}`,
        access: 'owner',
        tag,
        summary: `${action === 'disable' ? 'Disable' : 'Enable'} an account`,
        description: "Takes effect on the account's next request.",
        params: userParams,
        responses: { 200: { description: 'The account', body: userBody } },
        handle: async ({ tenant, caller, params }) =>
          json(userView(await users.setEnabled(tenant, caller, { userId: params.userId, enabled: action === 'enable' }))),
      }),
    ),
    // The original answered its update with 201.
    route({
      method: 'put',
      path: '/users/user/:userId/update',
      access: 'owner',
      tag,
      summary: "Change an account's e-mail or full name",
      description: 'The body may be the whole account as the original’s clients send it; its username never changes.',
      params: userParams,
      body: userUpdateSchema,
      responses: { 201: { description: 'The account', body: userBody } },
      handle: async ({ tenant, caller, params, body }) =>
        json(userView(await users.update(tenant, caller, { userId: params.userId, update: body })), 201),
    }),
    route({
      method: 'delete',
      path: '/users/user/:userId',
      access: 'owner',
      tag,
      summary: 'Delete an account',
      params: userParams,
      responses: { 200: { description: 'Deleted', body: z.object({ message: z.string() }) } },
      async handle({ tenant, caller, params }) {
        await users.delete(tenant, caller, params);
        return json({ message: `User ${params.userId} deleted` });
      },
    }),
  ];
}
