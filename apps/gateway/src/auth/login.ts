// Logging in with a username and password: rate-limited per client and instance before the password
// is even looked at (second-factor codes count with it), then a fresh token (CONTRACT §1).
import { ApiError, type RateLimit } from '@pds/http';
import type { ResolvedInstance } from '../instances/registry';
import { requireOpenTo } from '../instances/state';
import type { AuthService } from './service';
import { CODE_INVALID, CODE_NEEDED, type TotpService } from './totp';

export class LoginService {
  constructor(
    private readonly auth: AuthService,
    private readonly limiter: RateLimit,
    private readonly totp: TotpService,
  ) {}

  /** The caller is an anonymous client, known by its address (the rate limit's key). */
  async login(tenant: ResolvedInstance, client: { ip: string }, input: { username?: string; password?: string; totp?: string }) {
    const { username, password } = input;
    if (!username || !password)
      throw ApiError.notAuthenticated('Credentials required', { cause: 'No username or password provided to retrieve token' });
    await this.limiter.consume(`${tenant.instance.id}:${client.ip}`);
    const user = await this.auth.checkCredentials(tenant, username, password);
    if (!user) throw ApiError.notAuthenticated();
    if (user.totpEnabled) {
      if (!input.totp) throw ApiError.notAuthenticated(CODE_NEEDED, { cause: 'totp-required' });
      if (!(await this.totp.check(tenant.instance.id, user.id, input.totp)))
        throw ApiError.notAuthenticated(CODE_INVALID, { cause: 'totp-invalid' });
    }
    requireOpenTo(tenant, user);
    return { accessToken: await this.auth.issue(tenant, user), userId: user.id };
  }
}
