// Changing a password (knowing the current one) and resetting it by a mailed link. Either ends every
// session of the account begun before it (sessionsEndAt), on every gateway (the cached account carries it).
import type { PasswordResetRepository, User, UserRepository } from '@pds/db';
import { ApiError, limitedAddress, type AccountLimit, type RateLimit } from '@pds/http';
import { type Clock, hashPassword, passwordProblem, verifyPassword } from '@pds/tokens';
import type { Caller } from '../context';
import type { ResolvedInstance } from '../instances/registry';
import type { Mailer } from '../mail/mailer';
import { resetTokenHash } from './reset-tokens';
import { sessionsEndAt, type AuthService } from './service';

/** The original's answer to every reset request, whoever's address it names. */
export const RESET_REQUESTED =
  'If the email you have entered is correct, you will shortly receive an email with password reset instructions';

const invalidPassword = (cause: string) => new ApiError(403, 'Forbidden', 'Invalid password', { body: { cause } });
const invalidToken = () => ApiError.notAuthenticated('Invalid Token', { cause: 'Token does not exist, was used or has expired' });

function requireStrong(password: string, user: Pick<User, 'username' | 'fullName' | 'email'>): void {
  const problem = passwordProblem(password, [user.username, user.fullName ?? '', user.email ?? '']);
  if (problem) throw ApiError.badRequest(`newPassword ${problem}`);
}

export class PasswordService {
  constructor(
    private readonly users: UserRepository,
    private readonly resets: PasswordResetRepository,
    private readonly auth: AuthService,
    private readonly mailer: Mailer,
    private readonly clock: Clock,
    /**
     * Reset requests per client address of an instance, and per instance; tries of a link per client
     * address of an instance, and failed ones per instance (AccountLimit: links go to its owner alone).
     */
    private readonly limits: { client: RateLimit; instance: RateLimit; confirmClient: RateLimit; confirmAccount: AccountLimit },
  ) {}

  /** The caller's own password (owner or user, never an app); a new token for the session, as all older ones end. */
  async change(tenant: ResolvedInstance, caller: Caller, input: { password?: string; newPassword: string }): Promise<string> {
    if (caller.claims.accessScope === 'application') throw ApiError.forbidden('An application cannot change a password');
    if (!input.password) throw invalidPassword('Old password missing');
    const user = await this.users.findById(tenant.instance.id, caller.user.id);
    if (!user?.passwordHash || !(await verifyPassword(input.password, user.passwordHash))) throw invalidPassword('Old password invalid');
    requireStrong(input.newPassword, user);
    const validAfter = await this.users.setPassword(
      tenant.instance.id,
      user.id,
      await hashPassword(input.newPassword),
      sessionsEndAt(this.clock()),
    );
    if (!validAfter) throw invalidPassword('Old password invalid');
    return this.auth.issue(tenant, { id: user.id, kind: user.kind, disabled: user.disabled, tokensValidAfter: validAfter });
  }

  /**
   * Counts the request and queues it; the worker compares the address with the owner's (jobs/mail.ts).
   * Every request does exactly this, so neither the answer nor its time tells whether the address matched.
   */
  async requestReset(tenant: ResolvedInstance, client: { ip: string }, email: string): Promise<void> {
    await this.limits.client.consume(`${tenant.instance.id}:${limitedAddress(client.ip)}`);
    await this.limits.instance.consume(tenant.instance.id);
    await this.mailer.requestPasswordReset({ instanceId: tenant.instance.id, address: tenant.instance.address, email });
  }

  /**
   * Sets the password a valid link was mailed for and uses the link up; a token for the new session.
   * Links are 256 random bits, so guessing one is hopeless; the limits keep anyone from trying at length.
   */
  async confirmReset(tenant: ResolvedInstance, client: { ip: string }, token: string, newPassword: string): Promise<string> {
    const instanceId = tenant.instance.id;
    const address = limitedAddress(client.ip);
    await this.limits.confirmClient.consume(`${instanceId}:${address}`);
    await this.limits.confirmAccount.check(instanceId, address);
    const hash = resetTokenHash(token);
    const now = this.clock();
    const userId = await this.resets.find(instanceId, hash, now);
    const user = userId && (await this.users.findById(instanceId, userId));
    if (!user) {
      await this.limits.confirmAccount.fail(instanceId, address);
      throw invalidToken();
    }
    // Judged before the link is used, so a weak choice can be corrected with the same link.
    requireStrong(newPassword, user);
    // Not a guess when it fails here: the link was found a moment ago, and another request used it first.
    const used = await this.resets.use(instanceId, hash, now, await hashPassword(newPassword), sessionsEndAt(now));
    if (!used) throw invalidToken();
    await this.limits.confirmAccount.succeed(instanceId, address);
    return this.auth.issue(tenant, { id: user.id, kind: user.kind, disabled: user.disabled, tokensValidAfter: used.tokensValidAfter });
  }
}
