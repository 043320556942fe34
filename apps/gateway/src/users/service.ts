// Accounts the owner manages inside an instance: the userIds that file and data permissions name.
import { z } from 'zod';
import type { User, UserRepository } from '@pds/db';
import { ApiError } from '@pds/http';
import { hashPassword, passwordProblem } from '../auth/passwords';

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

  async create(instanceId: string, input: NewUserInput): Promise<User> {
    const passwordHash = await hashPassword(input.password as string);
    const user = await this.users.create(instanceId, {
      username: input.username,
      email: input.email,
      fullName: input.fullName,
      passwordHash,
      kind: 'user',
    });
    if (!user) throw ApiError.conflict(`The username ${input.username} is taken`);
    return user;
  }

  list(instanceId: string): Promise<User[]> {
    return this.users.list(instanceId);
  }

  async setEnabled(instanceId: string, userId: string, enabled: boolean): Promise<User> {
    await this.managed(instanceId, userId);
    const user = await this.users.setDisabled(instanceId, userId, !enabled);
    if (!user) throw ApiError.notFound(`User ${userId} not found`);
    return user;
  }

  async delete(instanceId: string, userId: string): Promise<void> {
    await this.managed(instanceId, userId);
    if (!(await this.users.delete(instanceId, userId))) throw ApiError.notFound(`User ${userId} not found`);
  }

  /** A plain user account of this instance: the owner's and apps' accounts are not managed here. */
  private async managed(instanceId: string, userId: string): Promise<User> {
    const user = z.uuid().safeParse(userId).success ? await this.users.findById(instanceId, userId) : null;
    if (!user) throw ApiError.notFound(`User ${userId} not found`);
    if (user.kind === 'owner') throw ApiError.forbidden('The owner account cannot be disabled or deleted');
    if (user.kind === 'application') throw ApiError.forbidden('App accounts are managed through /api/v2.6/applications');
    return user;
  }
}
