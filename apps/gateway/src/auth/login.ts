// Logging in with a username and password: rate-limited per client and instance before the password
// is even looked at (second-factor codes count with it), and per account: past LOGIN_ACCOUNT_LIMIT
// failures from every address together, an address that has failed on the account is refused
// (AccountLimit: a guessing spread over many addresses slows down, the owner is not locked out).
// Then a fresh token (CONTRACT §1).
import { createHash } from 'node:crypto';
import { ApiError, limitedAddress, type AccountLimit, type RateLimit } from '@pds/http';
import type { ResolvedInstance } from '../instances/registry';
import { requireOpenTo } from '../instances/state';
import type { AuthService } from './service';
import { CODE_INVALID, CODE_NEEDED, type TotpService } from './totp';

/**
 * The account a log-in is for, as the lookup finds it (usernames are lower case), whether or not it
 * exists: an unknown name is guarded alike, so the answers tell nothing about which names exist. Hashed,
 * so a key stays short whatever was sent.
 */
const accountOf = (instanceId: string, username: string) =>
  `${instanceId}:${createHash('sha256').update(username.toLowerCase()).digest('base64url').slice(0, 22)}`;

export class LoginService {
  constructor(
    private readonly auth: AuthService,
    private readonly limits: { client: RateLimit; account: AccountLimit },
    private readonly totp: TotpService,
  ) {}

  /** The caller is an anonymous client, known by its address (the rate limits' key). */
  async login(tenant: ResolvedInstance, client: { ip: string }, input: { username?: string; password?: string; totp?: string }) {
    const { username, password } = input;
    if (!username || !password)
      throw ApiError.notAuthenticated('Credentials required', { cause: 'No username or password provided to retrieve token' });
    const address = limitedAddress(client.ip);
    await this.limits.client.consume(`${tenant.instance.id}:${address}`);
    const account = accountOf(tenant.instance.id, username);
    await this.limits.account.check(account, address);
    const user = await this.auth.checkCredentials(tenant, username, password);
    if (!user) {
      await this.limits.account.fail(account, address);
      throw ApiError.notAuthenticated();
    }
    if (user.totpEnabled) {
      // Not a failure: the password was right, and the code is asked for.
      if (!input.totp) throw ApiError.notAuthenticated(CODE_NEEDED, { cause: 'totp-required' });
      if (!(await this.totp.check(tenant.instance.id, user.id, input.totp))) {
        await this.limits.account.fail(account, address);
        throw ApiError.notAuthenticated(CODE_INVALID, { cause: 'totp-invalid' });
      }
    }
    requireOpenTo(tenant, user);
    await this.limits.account.succeed(account, address);
    return { accessToken: await this.auth.issue(tenant, user), userId: user.id };
  }
}
