// Accounts the owner manages inside an instance: the userIds that file and data permissions name.
import { z } from 'zod';
import type { User, UserRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { hashPassword, passwordProblem } from '@pds/tokens';
import { requireOwner, type Caller } from '../context';
import type { ResolvedInstance } from '../instances/registry';

export const newUserSchema = z
  .object({
    username: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'must be 1 to 63 characters of a-z, 0-9, ., _ and -'),
    email: z.email('must be an e-mail address').max(254).optional(),
    fullName: z.string().trim().min(1).max(256).optional(),
    password: z.string().max(256).optional(),
    pass: z.string().max(256).optional(),
  })
  .transform(({ pass, password, ...rest }) => ({ ...rest, password: password ?? pass }))
  .superRefine((v, ctx) => {
    if (v.password === undefined) return ctx.addIssue({ code: 'custom', path: ['password'], message: 'is required' });
    const problem = passwordProblem(v.password, [v.username, v.fullName ?? '', v.email ?? '']);
    if (problem) ctx.addIssue({ code: 'custom', path: ['password'], message: problem });
  });

export type NewUserInput = z.output<typeof newUserSchema>;

/** The original's update body is a whole User; its e-mail and name change here (null clears), never the username. */
export const userUpdateSchema = z
  .object({
    userId: z.uuid().optional(),
    email: z.email('must be an e-mail address').max(254).nullable().optional(),
    fullName: z.string().trim().min(1).max(256).nullable().optional(),
    name: z.string().trim().min(1).max(256).optional().describe('The original’s field for the full name'),
  })
  .transform(({ name, fullName, ...rest }) => ({ ...rest, fullName: fullName === undefined ? name : fullName }));

export type UserUpdate = z.output<typeof userUpdateSchema>;

/** The public face of an account: never the password hash. */
export function userView(user: User) {
  return {
    userId: user.id,
    username: user.username,
    ...(user.email ? { email: user.email } : {}),
    ...(user.fullName ? { fullName: user.fullName } : {}),
    kind: user.kind,
    enabled: !user.disabled,
    createdAt: user.createdAt.toISOString(),
  };
}

export class UserService {
  constructor(private readonly users: UserRepository) {}

  async create(tenant: ResolvedInstance, caller: Caller, input: NewUserInput): Promise<User> {
    requireOwner(caller);
    const passwordHash = await hashPassword(input.password as string);
    const user = await this.users.create(
      tenant.instance.id,
      {
        username: input.username,
        email: input.email,
        fullName: input.fullName,
        passwordHash,
        kind: 'user',
      },
      caller.actor,
    );
    if (!user) throw ApiError.conflict(`The username ${input.username} is taken`);
    return user;
  }

  list(tenant: ResolvedInstance, caller: Caller): Promise<User[]> {
    requireOwner(caller);
    return this.users.list(tenant.instance.id);
  }

  async setEnabled(tenant: ResolvedInstance, caller: Caller, input: { userId: string; enabled: boolean }): Promise<User> {
    requireOwner(caller);
    const instanceId = tenant.instance.id;
    await this.managed(instanceId, input.userId);
    const user = await this.users.setDisabled(instanceId, input.userId, !input.enabled, caller.actor);
    if (!user) throw ApiError.notFound(`User ${input.userId} not found`);
    return user;
  }

  async update(tenant: ResolvedInstance, caller: Caller, input: { userId: string; update: UserUpdate }): Promise<User> {
    requireOwner(caller);
    const { userId: named, email, fullName } = input.update;
    if (named !== undefined && named !== input.userId) throw ApiError.badRequest(`userId: must be the path's user id ${input.userId}`);
    await this.managed(tenant.instance.id, input.userId);
    const user = await this.users.updateDetails(tenant.instance.id, input.userId, { email, fullName }, caller.actor);
    if (!user) throw ApiError.notFound(`User ${input.userId} not found`);
    return user;
  }

  async delete(tenant: ResolvedInstance, caller: Caller, input: { userId: string }): Promise<void> {
    requireOwner(caller);
    const instanceId = tenant.instance.id;
    await this.managed(instanceId, input.userId);
    if (!(await this.users.delete(instanceId, input.userId, caller.actor))) throw ApiError.notFound(`User ${input.userId} not found`);
  }

  /** A plain user account of this instance: the owner's and apps' accounts are not managed here. */
  private async managed(instanceId: string, userId: string): Promise<User> {
    const user = z.uuid().safeParse(userId).success ? await this.users.findById(instanceId, userId) : null;
    if (!user) throw ApiError.notFound(`User ${userId} not found`);
    if (user.kind === 'owner') throw ApiError.forbidden('The owner account is not managed here');
    if (user.kind === 'application') throw ApiError.forbidden('App accounts are managed through /api/v2.6/applications');
    return user;
  }
}
