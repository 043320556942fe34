// Logging in, authenticating tokens and the sliding refresh: the rules of CONTRACT §1.
import type { Account, User, UserKind, UserRepository } from '@pds/db';
import {
  type AccessScope,
  type Clock,
  type SigningKeys,
  epochSeconds,
  issueToken,
  TOKEN_REFRESH_AFTER_S,
  TokenRefused,
  type VerifiedTokenCache,
  verifyToken,
  DECOY_HASH,
  verifyPassword,
} from '@pds/tokens';
import type { Caller } from '../context';
import type { AccountCache } from './accounts';
import type { ResolvedInstance } from '../instances/registry';

const SCOPE_OF_KIND: Record<UserKind, AccessScope> = { owner: 'owner', user: 'user', application: 'application' };

/**
 * The account's "tokens valid after" for ending every session now. Tokens carry whole seconds, so it
 * is the next second: every token of this second or before is refused, and tokens issued from now on
 * are stamped no earlier than it (`issue`), so a log-in right after still works.
 */
export function sessionsEndAt(now: Date): Date {
  return new Date((Math.floor(now.getTime() / 1000) + 1) * 1000);
}

/** Seconds since the epoch before which the account's tokens are refused (0: none are). */
const validAfterSeconds = (account: Account) => (account.tokensValidAfter ? account.tokensValidAfter.getTime() / 1000 : 0);

export class AuthService {
  constructor(
    private readonly users: UserRepository,
    private readonly accounts: AccountCache,
    private readonly verified: VerifiedTokenCache,
    private readonly clock: Clock,
    /** The instance's keys for signing (InstanceRegistry.signingKeys). */
    private readonly signingKeys: (tenant: ResolvedInstance) => Promise<SigningKeys>,
    /** Told of each token issued: the operator's "last active" (InstanceRepository.touchActivity). */
    private readonly active: (instanceId: string, at: Date) => Promise<void>,
  ) {}

  /** The user for these credentials, or null; unknown users cost the same time as wrong passwords. */
  async checkCredentials(tenant: ResolvedInstance, username: string, password: string): Promise<User | null> {
    const user = await this.users.findByUsername(tenant.instance.id, username.toLowerCase());
    const valid = await verifyPassword(password, user?.passwordHash ?? DECOY_HASH);
    return valid && user && !user.disabled && user.kind !== 'application' ? user : null;
  }

  /** A new session token for a user of this instance. */
  async issue(tenant: ResolvedInstance, user: Account, options: { application?: string; authTime?: number } = {}): Promise<string> {
    await this.active(tenant.instance.id, this.clock());
    return issueToken(
      await this.signingKeys(tenant),
      {
        issuer: tenant.instance.address,
        subject: user.id,
        accessScope: SCOPE_OF_KIND[user.kind],
        application: options.application,
        authTime: options.authTime,
      },
      Math.max(epochSeconds(this.clock), validAfterSeconds(user)),
    ).token;
  }

  /**
   * Verifies a token for this instance and loads its account; throws TokenRefused with the cause.
   * `address`: the client's, recorded with the changes the caller makes.
   */
  async authenticate(tenant: ResolvedInstance, token: string, address?: string): Promise<Caller> {
    const now = epochSeconds(this.clock);
    const scope = tenant.instance.id;
    let claims = this.verified.get(scope, token, now);
    if (!claims) {
      claims = verifyToken(token, tenant.keys.publicKey, tenant.instance.address, now);
      this.verified.set(scope, token, claims, now);
    }
    // Cached, and dropped on every gateway when the instance's accounts change (accounts.ts), so
    // disabling or deleting an account takes effect at once.
    const user = await this.accounts.user(tenant.instance.id, claims.sub);
    if (!user || user.disabled || SCOPE_OF_KIND[user.kind] !== claims.accessScope) throw new TokenRefused('unknown user');
    // Sessions ended by a password change or reset, or "log out everywhere" (the cached account carries the instant).
    if (claims.iat < validAfterSeconds(user)) throw new TokenRefused('expired');
    // A person's own token (no app account, no app claim) has no app to ask after.
    const ofApp = user.kind === 'application' || claims.application !== undefined;
    if (ofApp && !(await this.appStillEnabled(tenant, user, claims.application))) throw new TokenRefused('unknown user');
    return { user, claims, token, actor: { kind: user.kind, id: user.id, address } };
  }

  /**
   * Checked on every request of an app, so disabling an app stops its tokens at once: an app token is
   * accepted only while its app is enabled and still bound to the token's account. The `application`
   * claim and an app account always come together; either one alone is refused.
   */
  private async appStillEnabled(tenant: ResolvedInstance, user: Account, application: string | undefined): Promise<boolean> {
    if (user.kind !== 'application' || application === undefined) return false;
    const app = await this.accounts.app(tenant.instance.id, application);
    return app !== null && app.enabled && app.userId === user.id;
  }

  /** Refuses, on every gateway within moments, every token of the account issued until now. */
  async endSessions(tenant: ResolvedInstance, userId: string): Promise<void> {
    await this.users.endSessions(tenant.instance.id, userId, sessionsEndAt(this.clock()));
  }

  /** A fresh token continuing the caller's session when theirs is over an hour old, else undefined. */
  async refreshed(tenant: ResolvedInstance, caller: Caller): Promise<string | undefined> {
    const now = epochSeconds(this.clock);
    if (now - caller.claims.iat < TOKEN_REFRESH_AFTER_S) return undefined;
    return this.issue(tenant, caller.user, { application: caller.claims.application, authTime: caller.claims.auth_time });
  }
}
